import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCountingBatcher, type CountingCall } from "../../../shared/verify/batch.js";
import { manualClock } from "../../../shared/platform/clock.js";
import { ENDPOINT_LABELS_PER_DAY, OTHER_LABEL, UNNAMED_INSTALL } from "../../../shared/verify/installations.js";
import { createKeys } from "../../../shared/platform/redis/keys.js";
import { loadScript } from "../../../shared/platform/redis/scripts.js";
import { cleanRedis } from "../../helpers/gateway.js";
import { chargeOf } from "../../../ingress/routes/refund.js";

/** The counting script's contract (shared/platform/redis/lua/verify-batch-n.lua), through the batcher, on real Redis. */

const prefix = `t:script:${randomBytes(4).toString("hex")}:`;
const keys = createKeys(prefix);
const NOW = Date.UTC(2030, 0, 15, 12, 0, 30);
const clock = manualClock(NOW);
let redis: Redis;

beforeAll(() => {
  redis = new Redis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  await cleanRedis(prefix);
  redis.disconnect();
});

let nextOrg = 1;
async function setup(): Promise<{ orgId: number; keyId: number }> {
  const orgId = nextOrg++;
  const keyId = orgId * 10;
  await redis.hset(keys.keySnapshot(orgId, keyId), "json", "{}", "v", "kv1");
  await redis.hset(keys.orgSnapshot(orgId), "json", "{}", "v", "ov1");
  return { orgId, keyId };
}

function call(ids: { orgId: number; keyId: number }, overrides: Partial<CountingCall> = {}): CountingCall {
  return {
    orgId: ids.orgId,
    keyId: ids.keyId,
    keyVersion: "kv1",
    orgVersion: "ov1",
    outcome: "ok",
    counts: true,
    ratePerMinute: 1000,
    allowance: null,
    install: "",
    endpoint: "verify",
    nowMs: NOW,
    cycleStartMs: NOW - 1000,
    ...overrides,
  };
}

const batcher = () => createCountingBatcher({ redis, keys, clock, script: loadScript("verify-batch-n.lua") });
const reasons = (outcomes: { kind: string; reason?: string }[]) => outcomes.map((o) => (o.kind === "stale" ? "stale" : o.reason));

async function events(orgId: number): Promise<Record<string, unknown>[]> {
  const entries = await redis.xrange(keys.usageStreamOf(orgId), "-", "+");
  return entries
    .flatMap(([, fields]) => (JSON.parse(fields[1]) as { events: Record<string, unknown>[] }).events)
    .filter((e) => e.org === orgId);
}

describe("the day a call is recorded under", () => {
  it("is the run's, which a refund takes the count back under: a call made just before midnight and sent after it", async () => {
    const a = await setup();
    const late = Date.UTC(2030, 0, 15, 23, 59, 59, 999);
    const runClock = manualClock(late + 2);
    const counting = createCountingBatcher({ redis, keys, clock: runClock, script: loadScript("verify-batch-n.lua") });
    const made = call(a, { nowMs: late, endpoint: "checkout" });
    expect(reasons([await counting.submit(made)])).toEqual(["ok"]);
    expect(made.day).toBe("2030-01-16");
    // The usage event and the label set are the run's day too: what a refund must name.
    const entries = await redis.xrange(keys.usageStreamOf(a.orgId), "-", "+");
    expect(entries.map(([, fields]) => (JSON.parse(fields[1]) as { day: string }).day)).toEqual(["2030-01-16"]);
    expect(await redis.sismember(keys.endpointLabels(a.orgId, a.keyId, "2030-01-16"), "checkout")).toBe(1);
    expect(chargeOf(made).day).toBe("2030-01-16");
  });
});

describe("verify-batch-n.lua", () => {
  it("answers one result per call, in order, in one run per shard", async () => {
    const a = await setup();
    const b = await setup();
    const runs: number[] = [];
    const counting = createCountingBatcher({ redis, keys, clock, script: loadScript("verify-batch-n.lua"), onRun: (n) => runs.push(n) });
    const results = await Promise.all([
      counting.submit(call(a)),
      counting.submit(call(a, { outcome: "domain_mismatch" })),
      counting.submit(call(b, { outcome: "key_suspended", counts: false })),
      counting.submit(call(a, { endpoint: "checkout" })),
    ]);
    expect(reasons(results)).toEqual(["ok", "domain_mismatch", "key_suspended", "ok"]);
    expect(runs.reduce((x, y) => x + y, 0)).toBe(4);
    expect(await redis.get(keys.cycleUsed(a.orgId, NOW - 1000))).toBe("3");
    expect(await redis.get(keys.cycleUsed(b.orgId, NOW - 1000))).toBeNull();
  });

  it("answers stale, and counts nothing, when a snapshot version moved or is gone", async () => {
    const a = await setup();
    expect(reasons([await batcher().submit(call(a, { keyVersion: "old" }))])).toEqual(["stale"]);
    expect(reasons([await batcher().submit(call(a, { orgVersion: "old" }))])).toEqual(["stale"]);
    await redis.del(keys.keySnapshot(a.orgId, a.keyId));
    expect(reasons([await batcher().submit(call(a))])).toEqual(["stale"]);
    expect(await redis.get(keys.cycleUsed(a.orgId, NOW - 1000))).toBeNull();
    expect(await events(a.orgId)).toEqual([]);
  });

  it("shuts the rate gate at rate_per_minute without taking a slot, then the allowance gate", async () => {
    const a = await setup();
    const c = batcher();
    const results = await Promise.all(Array.from({ length: 5 }, () => c.submit(call(a, { ratePerMinute: 3 }))));
    expect(reasons(results)).toEqual(["ok", "ok", "ok", "rate_limited", "rate_limited"]);
    expect(await redis.get(keys.rateWindow(a.orgId, a.keyId, Math.floor(NOW / 60_000)))).toBe("3");
    expect(await redis.ttl(keys.rateWindow(a.orgId, a.keyId, Math.floor(NOW / 60_000)))).toBeGreaterThan(60);
    const b = await setup();
    const spent = await Promise.all(Array.from({ length: 4 }, () => c.submit(call(b, { allowance: 2, outcome: "expired" }))));
    expect(reasons(spent)).toEqual(["expired", "expired", "usage_limit_exceeded", "usage_limit_exceeded"]);
    expect(await redis.get(keys.cycleUsed(b.orgId, NOW - 1000))).toBe("2");
    expect(await redis.pttl(keys.cycleUsed(b.orgId, NOW - 1000))).toBeGreaterThan(30 * 86_400_000);
  });

  it("records the first installation approved and the next pending, atomically within a batch", async () => {
    const a = await setup();
    const c = batcher();
    const results = await Promise.all([
      c.submit(call(a, { install: "one" })),
      c.submit(call(a, { install: "two" })),
      c.submit(call(a, { install: "one" })),
    ]);
    expect(reasons(results)).toEqual(["ok", "installation_pending", "ok"]);
    expect(await redis.hgetall(keys.installations(a.orgId, a.keyId))).toEqual({ one: "approved", two: "pending" });
    await redis.hset(keys.installations(a.orgId, a.keyId), "one", "blocked");
    expect(reasons([await c.submit(call(a, { install: "one" }))])).toEqual(["installation_blocked"]);
  });

  it("records the unnamed installation approved when it comes first: a stranger's name after it is pending", async () => {
    const a = await setup();
    const c = batcher();
    const results = await Promise.all([
      c.submit(call(a, { install: UNNAMED_INSTALL })),
      c.submit(call(a, { install: "evil" })),
      c.submit(call(a, { install: UNNAMED_INSTALL })),
    ]);
    expect(reasons(results)).toEqual(["ok", "installation_pending", "ok"]);
    expect(await redis.hgetall(keys.installations(a.orgId, a.keyId))).toEqual({ [UNNAMED_INSTALL]: "approved", evil: "pending" });
  });

  it("never refuses for an endpoint label: records a caller's label only for an ok call, folds the rest into (other)", async () => {
    const a = await setup();
    const c = batcher();
    const labels = keys.endpointLabels(a.orgId, a.keyId, "2030-01-15");
    // Refusals record nothing and report (other).
    const refused = await Promise.all([
      c.submit(call(a, { outcome: "domain_mismatch", endpoint: "wrong" })),
      c.submit(call(a, { outcome: "key_suspended", counts: false, endpoint: "wrong" })),
    ]);
    expect(reasons(refused)).toEqual(["domain_mismatch", "key_suspended"]);
    expect(await redis.scard(labels)).toBe(0);
    for (let i = 0; i < ENDPOINT_LABELS_PER_DAY; i++) await c.submit(call(a, { endpoint: `page-${i}` }));
    // Past the cap: answered as usual, reported as (other); a recorded label and an endpoint's own label are kept.
    const later = await Promise.all([
      c.submit(call(a, { endpoint: "page-new" })),
      c.submit(call(a, { endpoint: "page-new", outcome: "insufficient_scope" })),
      c.submit(call(a, { endpoint: "page-0", outcome: "insufficient_scope" })),
      c.submit(call(a, { endpoint: "verify" })),
      c.submit(call(a, { endpoint: "content" })),
    ]);
    expect(reasons(later)).toEqual(["ok", "insufficient_scope", "insufficient_scope", "ok", "ok"]);
    expect(await redis.scard(labels)).toBe(ENDPOINT_LABELS_PER_DAY);
    expect(await redis.sismember(labels, "page-new")).toBe(0);
    const list = await events(a.orgId);
    const base = { org: a.orgId, key: a.keyId, cycle: NOW - 1000, n: 1 };
    expect(list).toEqual(
      expect.arrayContaining([
        { ...base, endpoint: OTHER_LABEL, reason: "domain_mismatch", counted: 1 },
        { ...base, endpoint: OTHER_LABEL, reason: "key_suspended", counted: 0 },
        { ...base, endpoint: OTHER_LABEL, reason: "ok", counted: 1 },
        { ...base, endpoint: OTHER_LABEL, reason: "insufficient_scope", counted: 1 },
        { ...base, endpoint: "page-0", reason: "insufficient_scope", counted: 1 },
        { ...base, endpoint: "verify", reason: "ok", counted: 1 },
        { ...base, endpoint: "content", reason: "ok", counted: 1 },
      ]),
    );
    expect(list.some((e) => e.reason === "endpoint_limit_reached" || e.endpoint === "page-new" || e.endpoint === "wrong")).toBe(false);
  });

  it("puts a known installation in the usage event on its first call of each minute (last_seen_at), not on the others", async () => {
    const a = await setup();
    const c = batcher();
    await c.submit(call(a, { install: "site" }));
    await redis.hset(keys.installations(a.orgId, a.keyId), "other", "blocked");
    const sameMinute = await Promise.all([
      c.submit(call(a, { install: "site" })),
      c.submit(call(a, { install: "site" })),
      c.submit(call(a, { install: "other" })),
    ]);
    expect(reasons(sameMinute)).toEqual(["ok", "ok", "installation_blocked"]);
    const nextMinute = NOW + 60_000;
    await c.submit(call(a, { install: "site", nowMs: nextMinute }));
    await c.submit(call(a, { install: "site", nowMs: nextMinute }));
    const withInstall = (await events(a.orgId)).filter((e) => e.install !== undefined);
    // install_new only on the call that recorded it; the others are sightings.
    expect(withInstall.map((e) => [e.install, e.install_status, e.reason, e.install_new])).toEqual([
      ["site", "approved", "ok", 1],
      ["other", "blocked", "installation_blocked", undefined],
      ["site", "approved", "ok", undefined],
    ]);
    expect(await redis.ttl(keys.installSightings(a.orgId, a.keyId, Math.floor(NOW / 60_000)))).toBeGreaterThan(60);
  });

  it("alike calls travel as one entry with their number; each still gets its own answer", async () => {
    const a = await setup();
    const c = batcher();
    const minute = Math.floor(NOW / 60_000);
    // Three shapes interleaved: ok, a place refusal (its own window) and ok with an installation.
    const sent = [
      call(a),
      call(a, { outcome: "domain_mismatch" }),
      call(a),
      call(a, { install: "i-1" }),
      call(a, { outcome: "domain_mismatch" }),
      call(a),
      call(a, { install: "i-1" }),
    ];
    const results = await Promise.all(sent.map((one) => c.submit({ ...one, ratePerMinute: 4 })));
    // The three plain calls take three of the four slots, the first i-1 call the fourth; the place refusals count in their own window.
    expect(reasons(results)).toEqual(["ok", "domain_mismatch", "ok", "ok", "domain_mismatch", "ok", "rate_limited"]);
    expect(await redis.get(keys.rateWindow(a.orgId, a.keyId, minute))).toBe("4");
    expect(await redis.get(keys.refusalWindow(a.orgId, a.keyId, minute))).toBe("2");
    expect(await redis.get(keys.cycleUsed(a.orgId, NOW - 1000))).toBe("6");
    expect(await redis.hgetall(keys.installations(a.orgId, a.keyId))).toEqual({ "i-1": "approved" });
    const base = { org: a.orgId, key: a.keyId, endpoint: "verify", cycle: NOW - 1000 };
    expect(await events(a.orgId)).toEqual(
      expect.arrayContaining([
        { ...base, reason: "ok", counted: 1, n: 3 },
        { ...base, reason: "domain_mismatch", counted: 1, n: 2 },
        { ...base, reason: "ok", counted: 1, n: 1, install: "i-1", install_status: "approved", install_new: 1 },
        { ...base, reason: "rate_limited", counted: 0, n: 1 },
      ]),
    );
  });

  it("emits merged usage events without addresses", async () => {
    const a = await setup();
    const c = batcher();
    await Promise.all([
      c.submit(call(a)),
      c.submit(call(a)),
      c.submit(call(a, { outcome: "ip_blocked" })),
      c.submit(call(a, { install: "x" })),
      c.submit(call(a, { outcome: "key_suspended", counts: false })),
    ]);
    const list = await events(a.orgId);
    const base = { org: a.orgId, key: a.keyId, endpoint: "verify", cycle: NOW - 1000 };
    expect(list).toEqual(
      expect.arrayContaining([
        { ...base, reason: "ok", counted: 1, n: 2 },
        { ...base, reason: "ip_blocked", counted: 1, n: 1 },
        { ...base, reason: "ok", counted: 1, n: 1, install: "x", install_status: "approved", install_new: 1 },
        { ...base, reason: "key_suspended", counted: 0, n: 1 },
      ]),
    );
    expect(list).toHaveLength(4);
    const [, entry] = (await redis.xrange(keys.usageStreamOf(a.orgId), "-", "+")).at(-1) ?? [];
    const message = JSON.parse(entry?.[1] ?? "{}");
    expect(message).toMatchObject({ at: NOW, day: "2030-01-15" });
    const fields = new Set(list.flatMap((e) => Object.keys(e)));
    expect([...fields].sort()).toEqual([
      "counted",
      "cycle",
      "endpoint",
      "install",
      "install_new",
      "install_status",
      "key",
      "n",
      "org",
      "reason",
    ]);
    expect(Object.keys(message).sort()).toEqual(["at", "day", "events"]);
  });
});

describe("script loader", () => {
  it("falls back to EVAL when Redis does not know the script (NOSCRIPT)", async () => {
    const { runScript } = await import("../../../shared/platform/redis/scripts.js");
    const source = `-- ${randomBytes(8).toString("hex")}\nreturn ARGV[1]`;
    const script = { name: "probe", numKeys: 0, source, sha: "0".repeat(40) };
    expect(await runScript(redis, script, [], ["hello"])).toBe("hello");
    await expect(runScript(redis, script, ["extra"], [])).rejects.toThrow(/expected 0 keys/);
    expect(() => loadScript("badname.lua")).toThrow(/name it/);
  });
});
