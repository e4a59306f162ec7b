import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyUsageMessages, type UsageMessage } from "../../../actors/usage/handler.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import type { UsageBatch, UsageEvent } from "../../../shared/verify/usage-stream.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The messages of one group are applied by one statement when every one of them is new
 * (handler.ts, applyAllNew), the long way (a transaction that skips what was applied) when
 * one was applied before, is being applied by another consumer, or records an installation
 * pending. Either way every message counts exactly once, and the rows are the same.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("usageonestatement");
});
afterAll(async () => {
  await gw?.stop();
});

/** The pool, counting its statements and checked-out clients (a transaction checks one out). */
function counting(db: Pool) {
  const counts = { queries: 0, connects: 0 };
  const pool = {
    query: (...args: unknown[]) => {
      counts.queries++;
      return (db.query as (...a: unknown[]) => unknown)(...args);
    },
    connect: () => {
      counts.connects++;
      return db.connect();
    },
  } as unknown as Pool;
  return { pool, counts };
}

let nextId = 1_700_000_100_000;
const messageId = () => `${nextId++}-0`;

interface Totals {
  daily: { day: string; endpoint: string; reason: string; counted: number; refused: number; calls: number }[];
  cycle: number;
  installs: { install: string; status: string; first_seen_at: Date; last_seen_at: Date }[];
  lastUsed: number | undefined;
}

async function totals(made: MadeKey, cycleMs: number): Promise<Totals> {
  const db = gw.ctx.db;
  const daily = await db.query(
    "SELECT day, endpoint, reason, counted, refused, calls FROM usage_daily WHERE key_id = $1 ORDER BY day, endpoint, reason",
    [made.id],
  );
  const cycle = await db.query<{ used: number }>(
    "SELECT coalesce(sum(used), 0)::int AS used FROM cycle_usage WHERE org_id = $1 AND cycle_start = to_timestamp($2 / 1000.0)",
    [made.orgId, cycleMs],
  );
  const installs = await db.query(
    "SELECT install, status, first_seen_at, last_seen_at FROM installations WHERE key_id = $1 ORDER BY install",
    [made.id],
  );
  const lastUsed = await db.query<{ last_used_at: Date }>("SELECT last_used_at FROM key_last_used WHERE key_id = $1", [made.id]);
  return { daily: daily.rows, cycle: cycle.rows[0].used, installs: installs.rows, lastUsed: lastUsed.rows[0]?.last_used_at.getTime() };
}

/** A mix: two days, two endpoints, refusals, a refund, installation sightings. */
function mixedBatches(made: MadeKey, cycle: number, at: number): UsageBatch[] {
  const e = (extra: Partial<UsageEvent>): UsageEvent => ({
    org: made.orgId,
    key: made.id,
    endpoint: "verify",
    reason: "ok",
    counted: 1,
    cycle,
    n: 1,
    ...extra,
  });
  return [
    { at, day: "2031-01-01", events: [e({ n: 5 }), e({ endpoint: "checkout", n: 2 }), e({ reason: "rate_limited", counted: 0, n: 3 })] },
    { at: at + 1_000, day: "2031-01-01", events: [e({ n: 4, install: "site-a", install_status: "approved" })] },
    { at: at + 2_000, day: "2031-01-01", events: [e({ reason: "timeout", counted: 0, n: 2, refund: 1 })] },
    {
      at: at + 90_000,
      day: "2031-01-02",
      events: [e({ n: 7, install: "site-a", install_status: "approved" }), e({ reason: "domain_mismatch", n: 1 })],
    },
    { at: at + 120_000, day: "2031-01-02", events: [e({ n: 1, install: "site-b", install_status: "blocked" })] },
  ];
}

describe("usage messages applied together", () => {
  it("all new: one statement, no transaction, the same rows as the long way", async () => {
    const cycle = 1_700_000_000_901;
    const at = gw.ctx.clock.now();
    const together = await clientSetup(gw);
    const longWay = await clientSetup(gw);
    const other = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(together.orgId);

    const { pool, counts } = counting(gw.ctx.db);
    const messages: UsageMessage[] = mixedBatches(together, cycle, at).map((batch) => ({ stream, messageId: messageId(), batch }));
    expect(await applyUsageMessages(pool, messages)).toEqual(messages.map(() => true));
    expect(counts).toEqual({ queries: 1, connects: 0 });

    // The same messages for another key, behind one applied before (of a third key): the long way.
    const otherStream = gw.ctx.keys.usageStreamOf(other.orgId);
    const before: UsageMessage = {
      stream: otherStream,
      messageId: messageId(),
      batch: {
        at,
        day: "2031-01-01",
        events: [{ org: other.orgId, key: other.id, endpoint: "verify", reason: "ok", counted: 1, cycle, n: 1 }],
      },
    };
    expect(await applyUsageMessages(gw.ctx.db, [before])).toEqual([true]);
    const longStream = gw.ctx.keys.usageStreamOf(longWay.orgId);
    const slow = counting(gw.ctx.db);
    const group = [before, ...mixedBatches(longWay, cycle, at).map((batch) => ({ stream: longStream, messageId: messageId(), batch }))];
    expect(await applyUsageMessages(slow.pool, group)).toEqual(group.map((_, i) => i > 0));
    expect(slow.counts).toEqual({ queries: 1, connects: 1 });

    const expected = await totals(longWay, cycle);
    expect(expected.daily).toEqual([
      { day: "2031-01-01", endpoint: "checkout", reason: "ok", counted: 2, refused: 0, calls: 2 },
      { day: "2031-01-01", endpoint: "verify", reason: "ok", counted: 7, refused: 0, calls: 7 },
      { day: "2031-01-01", endpoint: "verify", reason: "rate_limited", counted: 0, refused: 3, calls: 3 },
      { day: "2031-01-01", endpoint: "verify", reason: "timeout", counted: 0, refused: 2, calls: 2 },
      { day: "2031-01-02", endpoint: "verify", reason: "domain_mismatch", counted: 1, refused: 1, calls: 1 },
      { day: "2031-01-02", endpoint: "verify", reason: "ok", counted: 8, refused: 0, calls: 8 },
    ]);
    expect(expected.cycle).toBe(18);
    expect(expected.installs.map((i) => [i.install, i.status])).toEqual([
      ["site-a", "approved"],
      ["site-b", "blocked"],
    ]);
    expect(await totals(together, cycle)).toEqual(expected);

    // Delivered again, together: nothing more (the long way finds every marker).
    expect(await applyUsageMessages(gw.ctx.db, messages)).toEqual(messages.map(() => false));
    expect(await totals(together, cycle)).toEqual(expected);
  });

  it("new and redelivered messages in one group: the new ones count once, the others not again", async () => {
    const cycle = 1_700_000_000_902;
    const at = gw.ctx.clock.now();
    const made = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const batch = (n: number): UsageBatch => ({
      at,
      day: "2031-02-01",
      events: [{ org: made.orgId, key: made.id, endpoint: "verify", reason: "ok", counted: 1, cycle, n }],
    });
    const first = { stream, messageId: messageId(), batch: batch(1) };
    const second = { stream, messageId: messageId(), batch: batch(10) };
    expect(await applyUsageMessages(gw.ctx.db, [first])).toEqual([true]);

    const { pool, counts } = counting(gw.ctx.db);
    const third = { stream, messageId: messageId(), batch: batch(100) };
    expect(await applyUsageMessages(pool, [second, first, third, second])).toEqual([true, false, true, false]);
    // The one statement failed on first's marker, leaving nothing; then the transaction.
    expect(counts).toEqual({ queries: 1, connects: 1 });
    const { daily, cycle: used } = await totals(made, cycle);
    expect(daily).toEqual([{ day: "2031-02-01", endpoint: "verify", reason: "ok", counted: 111, refused: 0, calls: 111 }]);
    expect(used).toBe(111);
  });

  it("two consumers applying overlapping groups at once count each message once", async () => {
    const cycle = 1_700_000_000_903;
    const at = gw.ctx.clock.now();
    const made = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const message = (n: number): UsageMessage => ({
      stream,
      messageId: messageId(),
      batch: { at, day: "2031-03-01", events: [{ org: made.orgId, key: made.id, endpoint: "verify", reason: "ok", counted: 1, cycle, n }] },
    });
    const all = Array.from({ length: 30 }, (_, i) => message(2 ** (i % 10)));
    const expected = all.reduce((sum, m) => sum + m.batch.events[0].n, 0);
    // Several rounds of overlapping groups: [0, 20) and [10, 30), then shifted, all at once.
    const groups = [all.slice(0, 20), all.slice(10, 30), all.slice(5, 25), all.slice(0, 30).reverse()];
    const outcomes = await Promise.all(groups.map((group) => applyUsageMessages(gw.ctx.db, group)));
    // Each message was applied now by exactly one of the groups.
    for (const m of all) {
      const appliedBy = groups.filter((group, g) => group.some((x, i) => x === m && outcomes[g][i])).length;
      expect(appliedBy).toBe(1);
    }
    const { daily, cycle: used } = await totals(made, cycle);
    expect(daily).toEqual([{ day: "2031-03-01", endpoint: "verify", reason: "ok", counted: expected, refused: 0, calls: expected }]);
    expect(used).toBe(expected);
  });

  it("a group with an installation first recorded pending goes the long way, and its notice is claimed", async () => {
    const cycle = 1_700_000_000_904;
    const at = gw.ctx.clock.now();
    const made = await clientSetup(gw);
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const { pool, counts } = counting(gw.ctx.db);
    const event = { org: made.orgId, key: made.id, endpoint: "verify", reason: "ok", counted: 1 as const, cycle, n: 1 };
    const applied = await applyUsageMessages(pool, [
      { stream, messageId: messageId(), batch: { at, day: "2031-04-01", events: [event] } },
      {
        stream,
        messageId: messageId(),
        batch: {
          at,
          day: "2031-04-01",
          events: [{ ...event, reason: "installation_pending", install: "new-site", install_status: "pending", install_new: 1 }],
        },
      },
    ]);
    expect(applied).toEqual([true, true]);
    expect(counts.connects).toBe(1);
    const notices = await gw.ctx.db.query("SELECT install FROM installation_notices WHERE key_id = $1", [made.id]);
    expect(notices.rows).toEqual([{ install: "new-site" }]);
    const { daily, installs } = await totals(made, cycle);
    expect(daily.map((r) => [r.reason, r.calls])).toEqual([
      ["installation_pending", 1],
      ["ok", 1],
    ]);
    expect(installs.map((i) => [i.install, i.status])).toEqual([["new-site", "pending"]]);
  });
});
