import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../actors/index.js";
import { firstRunOf, monitorJob, monitorScheduleKey, offsetOf, runMonitor } from "../../../actors/monitor/handler.js";
import { startMonitor } from "../../../actors/monitor/index.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { eventsOf, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { advance, makeKey, makeOrg, verifyDomain } from "../../ingress/routes/verify-fixtures.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

let gw: TestGateway;
let scanner: FakeScanner;
let monitor: RunningActor | null = null;
let orgId: number;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway("monitor");
  scanner = await startFakeScanner(gw);
  orgId = await makeOrg(gw, { plan: "professional" });
  for (const domain of ["a.test", "b.test", "c.test"]) await verifyDomain(gw, orgId, domain);
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "unverified.test" });
  key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
});

afterAll(async () => {
  await monitor?.stop();
  await scanner?.stop();
  await gw?.stop();
});

const monitorScans = async () =>
  (
    await gw.ctx.db.query<{ domain: string; n: number }>(
      "SELECT domain, count(*)::int AS n FROM scans WHERE trigger = 'monitor' AND kind = 'web' GROUP BY domain ORDER BY domain",
    )
  ).rows;

const KEY = Buffer.alloc(32, 7);

describe("schedule", () => {
  it("spreads domains over the period and keeps each at its offset", () => {
    const offsets = Array.from({ length: 200 }, (_, i) => offsetOf(KEY, 1, `d${i}.test`, DAY_MS));
    for (const o of offsets) {
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(DAY_MS);
    }
    const perQuarter = [0, 1, 2, 3].map((q) => offsets.filter((o) => Math.floor(o / (DAY_MS / 4)) === q).length);
    for (const n of perQuarter) expect(n).toBeGreaterThan(20);
    expect(offsetOf(KEY, 1, "a.test", DAY_MS)).toBe(offsetOf(KEY, 1, "a.test", DAY_MS));
    const now = Date.UTC(2030, 0, 1, 12);
    const first = firstRunOf(KEY, 1, "a.test", now, DAY_MS);
    expect(first).toBeGreaterThan(now);
    expect(first - now).toBeLessThanOrEqual(DAY_MS);
    expect(monitorJob(1, "a.test", first).job_id.length).toBeLessThanOrEqual(64);
  });
});

describe("monitor actor", () => {
  it("re-scans every verified domain once a day through the scanner, without spending the scan budget", async () => {
    monitor = await startMonitor(gw.ctx);
    await waitFor(async () => (await gw.ctx.db.query("SELECT count(*)::int AS n FROM monitor_schedule")).rows[0].n === 3);
    expect(await monitorScans()).toEqual([]);
    await advance(gw, 24 * 3600);
    await waitFor(async () => (await monitorScans()).length === 3);
    expect(await monitorScans()).toEqual([
      { domain: "a.test", n: 1 },
      { domain: "b.test", n: 1 },
      { domain: "c.test", n: 1 },
    ]);
    expect(
      scanner.jobs
        .filter((j) => j.trigger === "monitor")
        .map((j) => j.domain)
        .sort(),
    ).toEqual(["a.test", "b.test", "c.test"]);
    const budget = await gw.call("/api/v1/scan.php", { query: { key, domain: "a.test" } });
    expect(budget.headers.get("x-ratelimit-remaining")).toBe("10");

    // A regression between two monitored scans comes from the scanner as for any scan.
    scanner.statuses.set("b.test", { "email:spf": "fail", "email:dmarc": "fail", "headers:hsts": "fail", "headers:csp": "fail" });
    await advance(gw, 24 * 3600);
    await waitFor(async () => (await monitorScans()).every((r) => r.n === 2) && (await monitorScans()).length === 3);
    const regressions = await eventsOf(gw, orgId, "scan.regression");
    expect(regressions.map((e) => e.domain)).toContain("b.test");
    const activity = await gw.ctx.db.query("SELECT who, via FROM activity WHERE action_code = 'scan.completed' LIMIT 1");
    expect(activity.rows[0]).toEqual({ who: "system", via: "system" });
  });

  it("two monitors never claim one domain twice in a period", async () => {
    await monitor?.stop();
    monitor = null;
    await advance(gw, 24 * 3600);
    const now = gw.ctx.clock.now();
    const deps = {
      db: gw.ctx.db,
      redis: gw.ctx.redis,
      keys: gw.ctx.keys,
      nowMs: now,
      periodMs: DAY_MS,
      scheduleKey: monitorScheduleKey(gw.ctx.masterSecret),
    };
    const [a, b] = await Promise.all([runMonitor(deps), runMonitor(deps)]);
    expect(a + b).toBe(3);
    expect(await runMonitor(deps)).toBe(0);
    await waitFor(async () => (await monitorScans()).every((r) => r.n === 3));
  });

  it("forgets a domain that is no longer verified", async () => {
    await gw.ctx.db.query("UPDATE domains SET verified = false WHERE name = 'c.test'");
    await runMonitor({
      db: gw.ctx.db,
      redis: gw.ctx.redis,
      keys: gw.ctx.keys,
      nowMs: gw.ctx.clock.now(),
      periodMs: DAY_MS,
      scheduleKey: monitorScheduleKey(gw.ctx.masterSecret),
    });
    const { rows } = await gw.ctx.db.query("SELECT domain FROM monitor_schedule ORDER BY domain");
    expect(rows.map((r) => r.domain)).toEqual(["a.test", "b.test"]);
  });
});
