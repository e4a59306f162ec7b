import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCountingBatcher, type CountingCall } from "../../../shared/verify/batch.js";
import { manualClock } from "../../../shared/platform/clock.js";
import { UNNAMED_INSTALL } from "../../../shared/verify/installations.js";
import { createKeys } from "../../../shared/platform/redis/keys.js";
import { loadScript } from "../../../shared/platform/redis/scripts.js";
import type { Reason } from "../../../shared/platform/reasons.js";
import { cleanRedis } from "../../helpers/gateway.js";

/**
 * verify-batch-n.lua answers a shape of alike calls in closed form when the label is an
 * endpoint's own, and call by call for a caller-chosen label. A caller-chosen label already
 * in the key's set of the day changes nothing else, so the two must agree on every answer,
 * counter, installation and usage event: random batches (seeded) with small windows,
 * allowances, per-source limits, installations (one blocked midway) and outcomes that do
 * and do not count, run for one organization through each path.
 */

const prefix = `t:closed:${randomBytes(4).toString("hex")}:`;
const keys = createKeys(prefix);
const NOW = Date.UTC(2030, 0, 15, 12, 0, 30);
const DAY = "2030-01-15";
const MINUTE = Math.floor(NOW / 60_000);
const CYCLE = NOW - 1000;
let redis: Redis;

beforeAll(() => {
  redis = new Redis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  await cleanRedis(prefix);
  redis.disconnect();
});

function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Limits {
  rate: number;
  perSource: number | null;
  allowance: number | null;
}

type Plan = { outcome: Reason | "ok"; install: string; source: string }[][];

function makePlan(next: () => number): { limits: Limits; rounds: Plan } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const limits: Limits = {
    rate: 1 + Math.floor(next() * 8),
    perSource: next() < 0.4 ? 1 + Math.floor(next() * 4) : null,
    allowance: next() < 0.5 ? 2 + Math.floor(next() * 14) : null,
  };
  const outcomes: (Reason | "ok")[] = ["ok", "ok", "ok", "ok", "domain_mismatch", "key_suspended", "ip_blocked"];
  const installs = ["", UNNAMED_INSTALL, UNNAMED_INSTALL, "a", "b"];
  const rounds: Plan = Array.from({ length: 3 }, () =>
    Array.from({ length: 4 + Math.floor(next() * 18) }, () => ({
      outcome: pick(outcomes),
      install: pick(installs),
      source: pick(["", "s1", "s2"]),
    })),
  );
  return { limits, rounds };
}

let nextOrg = 1;

/** Runs the plan for a fresh organization with `endpoint`; returns what a client and PostgreSQL would see. */
async function runPlan(limits: Limits, rounds: Plan, endpoint: string) {
  const orgId = nextOrg++;
  const keyId = orgId * 10;
  await redis.hset(keys.keySnapshot(orgId, keyId), "json", "{}", "v", "kv");
  await redis.hset(keys.orgSnapshot(orgId), "json", "{}", "v", "ov");
  // A caller-chosen label already recorded today: the per-call path, with the label kept.
  if (endpoint !== "verify") await redis.sadd(keys.endpointLabels(orgId, keyId, DAY), endpoint);
  const clock = manualClock(NOW);
  const batcher = createCountingBatcher({ redis, keys, clock, script: loadScript("verify-batch-n.lua") });
  const answers: string[][] = [];
  for (const [round, calls] of rounds.entries()) {
    if (round === 2) await redis.hset(keys.installations(orgId, keyId), "b", "blocked");
    const outcomes = await Promise.all(
      calls.map((c) => {
        const call: CountingCall = {
          orgId,
          keyId,
          keyVersion: "kv",
          orgVersion: "ov",
          outcome: c.outcome,
          counts: c.outcome !== "key_suspended",
          ratePerMinute: limits.rate,
          ratePerSource: limits.perSource,
          source: limits.perSource === null ? "" : c.source,
          allowance: limits.allowance,
          install: c.install,
          endpoint,
          nowMs: NOW,
          cycleStartMs: CYCLE,
        };
        return batcher.submit(call);
      }),
    );
    answers.push(outcomes.map((o) => (o.kind === "stale" ? "stale" : o.reason)));
  }
  const counter = async (key: string) => (await redis.get(key)) ?? "0";
  const counters = {
    used: await counter(keys.cycleUsed(orgId, CYCLE)),
    rate: await counter(keys.rateWindow(orgId, keyId, MINUTE)),
    place: await counter(keys.refusalWindow(orgId, keyId, MINUTE)),
    s1: await counter(keys.sourceWindow(orgId, keyId, MINUTE, "s1")),
    s2: await counter(keys.sourceWindow(orgId, keyId, MINUTE, "s2")),
    pending: await counter(keys.pendingInstalls(orgId, keyId, DAY)),
  };
  const installations = await redis.hgetall(keys.installations(orgId, keyId));
  const sightings = await redis.hgetall(keys.installSightings(orgId, keyId, MINUTE));
  // Usage events summed by everything but their number and label (what the usage actor adds up).
  const summed = new Map<string, number>();
  for (const [, fields] of await redis.xrange(keys.usageStreamOf(orgId), "-", "+")) {
    for (const e of (JSON.parse(fields[1]) as { events: Record<string, unknown>[] }).events) {
      if (e.org !== orgId) continue;
      expect(e.endpoint).toBe(endpoint);
      const id = JSON.stringify([e.reason, e.counted, e.install ?? null, e.install_status ?? null, e.install_new ?? null]);
      summed.set(id, (summed.get(id) ?? 0) + (e.n as number));
    }
  }
  return { answers, counters, installations, sightings, events: [...summed].sort(([a], [b]) => a.localeCompare(b)) };
}

describe("verify-batch-n.lua closed form", () => {
  it("answers, counts and records exactly as the calls one by one do, on 60 random batches", async () => {
    const next = random(20261125);
    let passed = 0;
    let refusedByGate = 0;
    for (let scenario = 0; scenario < 60; scenario++) {
      const { limits, rounds } = makePlan(next);
      const closed = await runPlan(limits, rounds, "verify");
      const oneByOne = await runPlan(limits, rounds, "checkout");
      expect({ scenario, limits, ...closed }).toEqual({ scenario, limits, ...oneByOne });
      const all = closed.answers.flat();
      passed += all.filter((a) => a === "ok").length;
      refusedByGate += all.filter((a) => a === "rate_limited" || a === "usage_limit_exceeded").length;
    }
    // The batches reach every gate, not only the happy path.
    expect(passed).toBeGreaterThan(100);
    expect(refusedByGate).toBeGreaterThan(100);
  });
});
