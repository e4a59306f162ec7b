import type { Pool } from "../../shared/db/pool.js";
import { transaction } from "../../shared/db/pool.js";
import { markApplied, writeCycles, writeDaily, writeInstallations, type DailyRow } from "../../shared/db/usage.js";
import type { UsageBatch } from "../../shared/streams/usage.js";

/**
 * Usage accounting: one message (a verify batch) → usage_daily per key/day/endpoint/
 * reason, the organization's cycle_usage, and new installations, all in one
 * transaction together with the message's row in usage_applied. A redelivered message
 * finds its row and changes nothing, so redelivery never counts twice.
 *
 * Rows are written in a fixed order (sorted keys; daily, then cycles, then
 * installations) so concurrent consumers touching the same rows cannot deadlock.
 */

export interface ApplyContext {
  db: Pool;
  stream: string;
  messageId: string;
}

export function aggregate(batch: UsageBatch) {
  const daily = new Map<string, DailyRow>();
  const cycles = new Map<string, { org: number; cycle: number; used: number }>();
  const installs = new Map<string, { key: number; install: string; status: "approved" | "pending" }>();
  const rowOf = (key: number, org: number, endpoint: string, reason: string): DailyRow => {
    const dayKey = `${key}\u0000${endpoint}\u0000${reason}`;
    let found = daily.get(dayKey);
    if (!found) {
      found = { key, org, endpoint, reason, counted: 0, refused: 0, calls: 0 };
      daily.set(dayKey, found);
    }
    return found;
  };
  for (const e of batch.events) {
    if (e.refund === 1) {
      // Undo n `ok` calls (counted) and record them under the fault's reason, uncounted.
      const okRow = rowOf(e.key, e.org, e.endpoint, "ok");
      okRow.calls -= e.n;
      okRow.counted -= e.n;
      const faulted = rowOf(e.key, e.org, e.endpoint, e.reason);
      faulted.calls += e.n;
      faulted.refused += e.n;
      const cycleKey = `${e.org}:${e.cycle}`;
      const entry = cycles.get(cycleKey) ?? { org: e.org, cycle: e.cycle, used: 0 };
      entry.used -= e.n;
      cycles.set(cycleKey, entry);
      continue;
    }
    const dayKey = `${e.key}\u0000${e.endpoint}\u0000${e.reason}`;
    const row = daily.get(dayKey) ?? { key: e.key, org: e.org, endpoint: e.endpoint, reason: e.reason, counted: 0, refused: 0, calls: 0 };
    row.calls += e.n;
    row.counted += e.counted * e.n;
    if (e.reason !== "ok") row.refused += e.n;
    daily.set(dayKey, row);
    if (e.counted === 1) {
      const cycleKey = `${e.org}:${e.cycle}`;
      const entry = cycles.get(cycleKey) ?? { org: e.org, cycle: e.cycle, used: 0 };
      entry.used += e.n;
      cycles.set(cycleKey, entry);
    }
    if (e.install !== undefined && e.install_status !== undefined) {
      installs.set(`${e.key}\u0000${e.install}`, { key: e.key, install: e.install, status: e.install_status });
    }
  }
  const byText = <T>(entries: Map<string, T>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  return {
    daily: [...daily.values()].sort((a, b) => a.key - b.key || (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0)),
    cycles: [...cycles.values()].sort((a, b) => a.org - b.org || a.cycle - b.cycle),
    installs: byText(installs),
  };
}

/** Applies one message; returns false when it had been applied before. */
export async function applyUsage(batch: UsageBatch, ctx: ApplyContext): Promise<boolean> {
  const { daily, cycles, installs } = aggregate(batch);
  return transaction(ctx.db, async (tx) => {
    if (!(await markApplied(tx, ctx.stream, ctx.messageId, batch.at))) return false;
    await writeDaily(tx, batch.day, daily);
    await writeCycles(tx, cycles);
    await writeInstallations(tx, batch.at, installs);
    return true;
  });
}

export { APPLIED_RETENTION_MS, pruneApplied } from "../../shared/db/usage.js";
