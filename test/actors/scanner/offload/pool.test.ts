/**
 * The scanner's checks in worker threads (offload/pool.ts): the same findings as in the
 * caller's thread, a time budget that ends a worker stuck in a loop while the caller's
 * event loop goes on (a Redis round trip completes meanwhile), and a fresh worker after.
 */
import { afterAll, describe, expect, test } from "vitest";
import { fileURLToPath } from "node:url";
import { createRedis } from "../../../../shared/platform/redis/client.js";
import { IN_THREAD } from "../../../../actors/scanner/evaluate.js";
import { CheckBudgetExceeded, createCheckPool } from "../../../../actors/scanner/offload/pool.js";
import { emptyDnsEvidence, emptyWebEvidence } from "../../../../shared/platform/net/outbound/evidence.js";
import { DOMAIN, NOW, dnsWith, txt, webWithPage } from "../builders.js";

const redis = createRedis("redis://127.0.0.1:6379", "test-check-pool");
afterAll(() => redis.quit());

const stuckWorker = fileURLToPath(new URL("../../../fixtures/scanner/stuck-worker.mjs", import.meta.url));

describe("the check pool", () => {
  test("gives the findings the caller's thread gives, for a scan and for one check", async () => {
    const pool = createCheckPool({ size: 2, budgetMs: 30_000 });
    try {
      const dns = dnsWith({ txt: txt(DOMAIN, "v=spf1 -all") });
      const web = webWithPage(
        [
          ["content-type", "text/html"],
          ["referrer-policy", "no-referrer"],
        ],
        { body: `<script src="https://cdn.example.net/a.js"></script>` },
      );
      const [inWorker, inThread] = await Promise.all([pool.sections(dns, web), IN_THREAD.sections(dns, web)]);
      expect(inWorker).toEqual(inThread);
      expect(inWorker.web.findings.find((f) => f.id === "content:sri")?.result).toBe("sri-missing");
      const one = await pool.check("headers:referrer-policy", { section: "web", evidence: web });
      expect(one).toEqual(await IN_THREAD.check("headers:referrer-policy", { section: "web", evidence: web }));
      await expect(pool.check("headers:referrer-policy", { section: "dns", evidence: dns })).rejects.toThrow(/no dns check/);
    } finally {
      await pool.close();
    }
  });

  test("ends a worker past its budget without holding up the caller, then serves the next task", async () => {
    const pool = createCheckPool({ size: 1, budgetMs: 3_000, workerFile: stuckWorker });
    try {
      let settled = false;
      const stuck = pool.sections(emptyDnsEvidence("spin.test", NOW), emptyWebEvidence("spin.test", NOW)).finally(() => {
        settled = true;
      });
      // The worker spins; this thread still talks to Redis.
      expect(await redis.ping()).toBe("PONG");
      expect(settled).toBe(false);
      await expect(stuck).rejects.toBeInstanceOf(CheckBudgetExceeded);
      // The one slot was freed by ending the stuck worker: a new one answers.
      expect(await pool.sections(emptyDnsEvidence(DOMAIN, NOW), emptyWebEvidence(DOMAIN, NOW))).toEqual({ answered: "sections" });
    } finally {
      await pool.close();
    }
  });

  test("closing rejects what was waiting and refuses new work", async () => {
    const pool = createCheckPool({ size: 1, budgetMs: 60_000, workerFile: stuckWorker });
    const running = pool.sections(emptyDnsEvidence("spin.test", NOW), emptyWebEvidence("spin.test", NOW));
    const waiting = pool.sections(emptyDnsEvidence(DOMAIN, NOW), emptyWebEvidence(DOMAIN, NOW));
    const outcomes = Promise.allSettled([running, waiting]);
    await pool.close();
    for (const outcome of await outcomes)
      expect(outcome).toMatchObject({ status: "rejected", reason: { message: "the check pool is closed" } });
    await expect(pool.sections(emptyDnsEvidence(DOMAIN, NOW), emptyWebEvidence(DOMAIN, NOW))).rejects.toThrow(/closed/);
  });
});
