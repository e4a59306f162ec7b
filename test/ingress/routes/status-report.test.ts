import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reportTtlSeconds } from "../../../ingress/routes/status/report.js";
import { createPool, type Pool } from "../../../shared/platform/db/pool.js";
import { quarterOf } from "../../../shared/status/report.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";

/**
 * The quarterly report is built once per quarter and cache period however many read it at
 * once (docs/status.md, "The report's cache"). A build is counted by the one query only a
 * build makes (`monthlyUptime`, the months of the quarter), per pool: the gateway is given
 * a read pool of its own, so the test sees which pool a build reads.
 */

let gw: TestGateway;
let primary: Pool;
let readPool: Pool;

beforeAll(async () => {
  gw = await startTestGateway("statusreport");
  primary = gw.ingress.deps.readDb;
  readPool = createPool(gw.databaseUrl, 4);
  gw.ingress.deps.readDb = readPool;
});
afterAll(async () => {
  if (gw) gw.ingress.deps.readDb = primary;
  await readPool?.end();
  await gw?.stop();
});

const MONTHS_QUERY = "'YYYY-MM'";

function buildsOn(pool: Pool) {
  const spy = vi.spyOn(pool, "query");
  const text = (query: unknown) => (typeof query === "string" ? query : String((query as { text?: unknown } | null)?.text ?? ""));
  return {
    count: () => spy.mock.calls.filter(([query]) => text(query).includes(MONTHS_QUERY)).length,
    restore: () => spy.mockRestore(),
  };
}

const report = (quarter?: string) => fetch(`${gw.url}/status/report${quarter ? `?quarter=${quarter}` : ""}`);
const currentLabel = () => {
  const now = new Date(gw.ctx.clock.now());
  return `${now.getUTCFullYear()}-Q${Math.floor(now.getUTCMonth() / 3) + 1}`;
};

describe("the quarterly report's cache", () => {
  it("200 concurrent readers of an uncached quarter make one build, from the read pool", async () => {
    const onRead = buildsOn(readPool);
    const onPrimary = buildsOn(gw.ingress.deps.db);
    try {
      const answers = await Promise.all(Array.from({ length: 200 }, () => report("2024-Q2")));
      expect(answers.map((a) => a.status)).toEqual(Array(200).fill(200));
      const bodies = new Set(await Promise.all(answers.map((a) => a.text())));
      expect(bodies.size).toBe(1);
      expect([...bodies][0]).toContain("quarterly report 2024-Q2");
      expect(onRead.count() + onPrimary.count()).toBe(1);
      expect(onPrimary.count()).toBe(0);
      // Kept: a later reader builds nothing.
      expect((await report("2024-Q2")).status).toBe(200);
      expect(onRead.count()).toBe(1);
    } finally {
      onRead.restore();
      onPrimary.restore();
    }
  });

  it("keeps a finished quarter an hour and the current one a minute", async () => {
    expect((await report("2024-Q3")).status).toBe(200);
    const finished = await gw.ctx.redis.ttl(gw.ctx.keys.statusReport("2024-Q3"));
    expect(finished).toBeGreaterThan(60);
    expect(finished).toBeLessThanOrEqual(3600);
    expect((await report()).status).toBe(200);
    const current = await gw.ctx.redis.ttl(gw.ctx.keys.statusReport(currentLabel()));
    expect(current).toBeGreaterThan(0);
    expect(current).toBeLessThanOrEqual(60);
  });

  it("counts a quarter as current for 15 minutes after its end (a check may land late)", () => {
    const q = quarterOf(2025, 4);
    expect(reportTtlSeconds(q, q.fromMs)).toBe(60);
    expect(reportTtlSeconds(q, q.toMs + 14 * 60_000)).toBe(60);
    expect(reportTtlSeconds(q, q.toMs + 15 * 60_000)).toBe(3600);
  });

  it("while another process holds the build lock, readers wait for its copy and build nothing", async () => {
    const key = gw.ctx.keys.statusReport("2024-Q1");
    await gw.ctx.redis.set(gw.ctx.keys.statusReport("2024-Q1:building"), "another-process", "PX", 15_000);
    const onRead = buildsOn(readPool);
    const gets = vi.spyOn(gw.ingress.deps.redis, "get");
    try {
      const answers = Promise.all(Array.from({ length: 20 }, () => report("2024-Q1").then((a) => a.text())));
      // Waiting: a first read of the copy, then polls while the lock is held.
      await waitFor(() => gets.mock.calls.filter(([k]) => k === key).length >= 3);
      const theirs = "<!doctype html><p>built by another process</p>";
      await gw.ctx.redis.set(key, theirs, "EX", 60);
      expect(await answers).toEqual(Array(20).fill(theirs));
      expect(onRead.count()).toBe(0);
    } finally {
      gets.mockRestore();
      onRead.restore();
    }
  });

  it("a failed build answers 503 and releases its lock: the next reader builds", async () => {
    const query = vi.spyOn(readPool, "query").mockImplementationOnce(() => {
      throw new Error("connection terminated");
    });
    try {
      expect((await report("2023-Q4")).status).toBe(503);
    } finally {
      query.mockRestore();
    }
    expect(await gw.ctx.redis.exists(gw.ctx.keys.statusReport("2023-Q4:building"))).toBe(0);
    const again = await report("2023-Q4");
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("quarterly report 2023-Q4");
  });

  it("is HTML under a CSP that allows its inline styles only, with nosniff", async () => {
    const res = await report("2024-Q2");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toMatch(/<script|<img|<iframe|@import|url\(/i);
  });
});
