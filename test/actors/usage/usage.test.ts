import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyUsage, applyUsageMessages } from "../../../actors/usage/handler.js";
import { createUsageWriter } from "../../../actors/usage/writer.js";
import { usageActor } from "../../../actors/usage/index.js";
import type { UsageBatch } from "../../../shared/verify/usage-stream.js";
import { runActor, type ActorHandle } from "../../../actors/runtime/index.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { cleanRedis, startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, usedOf, verify } from "../../ingress/routes/verify-fixtures.js";

let gw: TestGateway;
let actor: ActorHandle | null = null;
beforeAll(async () => {
  gw = await startTestGateway("usage");
});
afterAll(async () => {
  await actor?.stop({ timeoutMs: 2000 });
  await gw?.stop();
});

const startActor = async () => {
  actor = await runActor(usageActor, {
    redis: gw.ctx.redis,
    keys: gw.ctx.keys,
    clock: gw.ctx.clock,
    logger: silentLogger(),
    db: gw.ctx.db,
    consumerName: "test-usage",
  });
};

interface DailyRow {
  day: string;
  endpoint: string;
  reason: string;
  counted: number;
  refused: number;
  calls: number;
}

async function daily(keyId: number): Promise<DailyRow[]> {
  const { rows } = await gw.ctx.db.query<DailyRow>(
    "SELECT day, endpoint, reason, counted, refused, calls FROM usage_daily WHERE key_id = $1 ORDER BY endpoint, reason",
    [keyId],
  );
  return rows;
}

async function cycleUsedInDb(orgId: number): Promise<number> {
  const { rows } = await gw.ctx.db.query<{ used: number }>(
    "SELECT coalesce(sum(used), 0)::int AS used FROM cycle_usage WHERE org_id = $1",
    [orgId],
  );
  return rows[0].used;
}

describe("usage accounting actor", () => {
  it("lands verify calls in usage_daily, cycle_usage and installations", async () => {
    await startActor();
    const made = await clientSetup(gw);
    const call = (extra: Record<string, unknown>) => verify(gw, { key: made.key, domain: "example.com", ...extra });
    // Calls without `install` first: the first of them records the "(unnamed)" installation
    // approved, so the named ones after it are pending (shared/verify/installations.ts).
    await Promise.all([call({}), call({}), call({ endpoint: "checkout" }), call({ domain: "bad.org" })]);
    await call({ install: "i-1" });
    await call({ install: "i-2" });
    await gw.admin("POST", `/keys/${made.id}/suspend`);
    await call({});
    const day = new Date((await gw.admin("GET", "/clock")).body.now * 1000).toISOString().slice(0, 10);
    await waitFor(async () => (await daily(made.id)).reduce((n, r) => n + r.calls, 0) === 7);
    expect(await daily(made.id)).toEqual([
      { day, endpoint: "checkout", reason: "ok", counted: 1, refused: 0, calls: 1 },
      { day, endpoint: "verify", reason: "domain_mismatch", counted: 1, refused: 1, calls: 1 },
      { day, endpoint: "verify", reason: "installation_pending", counted: 2, refused: 2, calls: 2 },
      { day, endpoint: "verify", reason: "key_suspended", counted: 0, refused: 1, calls: 1 },
      { day, endpoint: "verify", reason: "ok", counted: 2, refused: 0, calls: 2 },
    ]);
    expect(await cycleUsedInDb(made.orgId)).toBe(6);
    const { rows } = await gw.ctx.db.query("SELECT install, status FROM installations WHERE key_id = $1 ORDER BY install", [made.id]);
    expect(rows).toEqual([
      { install: "(unnamed)", status: "approved" },
      { install: "i-1", status: "pending" },
      { install: "i-2", status: "pending" },
    ]);
    const usage = await gw.admin("GET", `/keys/${made.id}/usage`);
    expect(usage.body.usage[0]).toMatchObject({ calls: 7, counted: 6, refused: 4, by_endpoint: { checkout: 1, verify: 6 } });
  });

  it("never counts a redelivered message twice", async () => {
    const made = await clientSetup(gw);
    const batch: UsageBatch = {
      at: gw.ctx.clock.now(),
      day: "2030-01-02",
      events: [{ org: made.orgId, key: made.id, endpoint: "verify", reason: "ok", counted: 1, cycle: 1_700_000_000_123, n: 1 }],
    };
    const ctx = { db: gw.ctx.db, stream: gw.ctx.keys.usageStreamOf(made.orgId), messageId: "1700000000000-7" };
    expect(await applyUsage(batch, ctx)).toBe(true);
    expect(await applyUsage(batch, ctx)).toBe(false);
    expect(await applyUsage(batch, { ...ctx, messageId: "1700000000000-8" })).toBe(true);
    const rows = (await daily(made.id)).filter((r) => r.day === "2030-01-02");
    expect(rows).toEqual([{ day: "2030-01-02", endpoint: "verify", reason: "ok", counted: 2, refused: 0, calls: 2 }]);
  });

  it("stamps each key's last use, to the minute", async () => {
    const made = await clientSetup(gw);
    const lastUsed = async () =>
      (
        await gw.ctx.db.query<{ last_used_at: Date }>("SELECT last_used_at FROM key_last_used WHERE key_id = $1", [made.id])
      ).rows[0]?.last_used_at.getTime();
    const ctx = { db: gw.ctx.db, stream: gw.ctx.keys.usageStreamOf(made.orgId) };
    const at = 1_900_000_000_000;
    const batch = (atMs: number): UsageBatch => ({
      at: atMs,
      day: "2030-03-04",
      events: [{ org: made.orgId, key: made.id, endpoint: "verify", reason: "ok", counted: 1, cycle: 1_700_000_000_789, n: 1 }],
    });
    expect(await applyUsage(batch(at), { ...ctx, messageId: "1700000000000-30" })).toBe(true);
    expect(await lastUsed()).toBe(at);
    // Within the minute: no write. A minute later: written.
    expect(await applyUsage(batch(at + 30_000), { ...ctx, messageId: "1700000000000-31" })).toBe(true);
    expect(await lastUsed()).toBe(at);
    expect(await applyUsage(batch(at + 61_000), { ...ctx, messageId: "1700000000000-32" })).toBe(true);
    expect(await lastUsed()).toBe(at + 61_000);
  });

  it("a refund moves a counted ok call to the fault's reason, uncounted, and out of the cycle (docs/security.md, 11a)", async () => {
    const made = await clientSetup(gw);
    const cycle = 1_700_000_000_456;
    const at = gw.ctx.clock.now();
    const ctx = { db: gw.ctx.db, stream: gw.ctx.keys.usageStreamOf(made.orgId) };
    const counted: UsageBatch = {
      at,
      day: "2030-02-03",
      events: [{ org: made.orgId, key: made.id, endpoint: "scan", reason: "ok", counted: 1, cycle, n: 2 }],
    };
    const refund: UsageBatch = {
      at,
      day: "2030-02-03",
      events: [{ org: made.orgId, key: made.id, endpoint: "scan", reason: "timeout", counted: 0, cycle, n: 1, refund: 1 }],
    };
    expect(await applyUsage(counted, { ...ctx, messageId: "1700000000000-20" })).toBe(true);
    expect(await applyUsage(refund, { ...ctx, messageId: "1700000000000-21" })).toBe(true);
    expect(await applyUsage(refund, { ...ctx, messageId: "1700000000000-21" })).toBe(false);
    const rows = (await daily(made.id)).filter((r) => r.day === "2030-02-03");
    expect(rows).toEqual([
      { day: "2030-02-03", endpoint: "scan", reason: "ok", counted: 1, refused: 0, calls: 1 },
      { day: "2030-02-03", endpoint: "scan", reason: "timeout", counted: 0, refused: 1, calls: 1 },
    ]);
    expect(await cycleUsedInDb(made.orgId)).toBe(1);
  });

  it("after a Redis loss the cycle counter comes back from cycle_usage", async () => {
    const made = await clientSetup(gw);
    await Promise.all(Array.from({ length: 5 }, () => verify(gw, { key: made.key, domain: "example.com" })));
    await waitFor(async () => (await cycleUsedInDb(made.orgId)) === 5);
    await cleanRedis(gw.prefix);
    await waitFor(async () => (await verify(gw, { key: made.key, domain: "example.com" })).status === 200, 10_000);
    expect(await usedOf(gw, made.orgId)).toBe(6);
  });
});

describe("usage writer: messages read together, one transaction", () => {
  const event = (orgId: number, keyId: number, n: number) => ({
    org: orgId,
    key: keyId,
    endpoint: "verify",
    reason: "ok",
    counted: 1 as const,
    cycle: 1_700_000_000_789,
    n,
  });

  it("sums the messages of one group, each once, and skips those applied before", async () => {
    const made = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const at = gw.ctx.clock.now();
    const message = (id: string, n: number, day = "2030-03-04") => ({
      stream,
      messageId: id,
      batch: { at, day, events: [event(made.orgId, made.id, n)] },
    });
    expect(await applyUsage(message("1700000000000-30", 1).batch, { db: gw.ctx.db, stream, messageId: "1700000000000-30" })).toBe(true);
    const applied = await applyUsageMessages(gw.ctx.db, [
      message("1700000000000-30", 1), // applied before: adds nothing
      message("1700000000000-31", 2),
      message("1700000000000-31", 2), // the same message twice in one group: once
      message("1700000000000-32", 4, "2030-03-05"),
    ]);
    expect(applied).toEqual([false, true, false, true]);
    const rows = (await daily(made.id)).filter((r) => r.day >= "2030-03-04").sort((a, b) => (a.day < b.day ? -1 : 1));
    expect(rows).toEqual([
      { day: "2030-03-04", endpoint: "verify", reason: "ok", counted: 3, refused: 0, calls: 3 },
      { day: "2030-03-05", endpoint: "verify", reason: "ok", counted: 4, refused: 0, calls: 4 },
    ]);
  });

  it("a message PostgreSQL refuses fails alone; the others of its group are applied", async () => {
    const made = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const at = gw.ctx.clock.now();
    const writer = createUsageWriter();
    const message = (id: string, day: string) => ({ stream, messageId: id, batch: { at, day, events: [event(made.orgId, made.id, 1)] } });
    const outcomes = await Promise.allSettled([
      writer.apply(gw.ctx.db, message("1700000000000-40", "2030-04-05")),
      writer.apply(gw.ctx.db, message("1700000000000-41", "2030-99-99")),
      writer.apply(gw.ctx.db, message("1700000000000-42", "2030-04-05")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const rows = (await daily(made.id)).filter((r) => r.day === "2030-04-05");
    expect(rows).toEqual([{ day: "2030-04-05", endpoint: "verify", reason: "ok", counted: 2, refused: 0, calls: 2 }]);
  });
});
