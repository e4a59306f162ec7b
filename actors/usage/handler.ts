import type { Pool } from "../../shared/db/pool.js";
import { transaction, type Queryable } from "../../shared/db/pool.js";
import type { UsageBatch } from "./messages.js";

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

interface DailyRow {
  key: number;
  org: number;
  endpoint: string;
  reason: string;
  counted: number;
  refused: number;
  calls: number;
}

export function aggregate(batch: UsageBatch) {
  const daily = new Map<string, DailyRow>();
  const cycles = new Map<string, { org: number; cycle: number; used: number }>();
  const installs = new Map<string, { key: number; install: string; status: "approved" | "pending" }>();
  for (const e of batch.events) {
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

async function writeDaily(tx: Queryable, day: string, rows: DailyRow[]): Promise<void> {
  await tx.query(
    `INSERT INTO usage_daily (key_id, org_id, day, endpoint, reason, counted, refused, calls)
     SELECT k, o, $1::date, e, r, c, f, n
     FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) AS t(k, o, e, r, c, f, n)
     ON CONFLICT (key_id, day, endpoint, reason) DO UPDATE SET
       counted = usage_daily.counted + EXCLUDED.counted,
       refused = usage_daily.refused + EXCLUDED.refused,
       calls = usage_daily.calls + EXCLUDED.calls`,
    [
      day,
      rows.map((r) => r.key),
      rows.map((r) => r.org),
      rows.map((r) => r.endpoint),
      rows.map((r) => r.reason),
      rows.map((r) => r.counted),
      rows.map((r) => r.refused),
      rows.map((r) => r.calls),
    ],
  );
}

async function writeCycles(tx: Queryable, rows: { org: number; cycle: number; used: number }[]): Promise<void> {
  if (rows.length === 0) return;
  // Same expression as cycleUsed() in shared/db/orgs.ts, so the projector finds the row.
  await tx.query(
    `INSERT INTO cycle_usage (org_id, cycle_start, used)
     SELECT o, to_timestamp(c / 1000.0), u FROM unnest($1::bigint[], $2::numeric[], $3::bigint[]) AS t(o, c, u)
     ON CONFLICT (org_id, cycle_start) DO UPDATE SET used = cycle_usage.used + EXCLUDED.used`,
    [rows.map((r) => r.org), rows.map((r) => r.cycle), rows.map((r) => r.used)],
  );
}

async function writeInstallations(tx: Queryable, seenMs: number, rows: { key: number; install: string; status: string }[]): Promise<void> {
  if (rows.length === 0) return;
  // The first status written wins: an approval or block made meanwhile is kept.
  await tx.query(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     SELECT k, i, s, to_timestamp($1 / 1000.0), to_timestamp($1 / 1000.0)
     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(k, i, s)
     ON CONFLICT (key_id, install) DO UPDATE SET
       last_seen_at = GREATEST(installations.last_seen_at, EXCLUDED.last_seen_at),
       first_seen_at = LEAST(installations.first_seen_at, EXCLUDED.first_seen_at)`,
    [seenMs, rows.map((r) => r.key), rows.map((r) => r.install), rows.map((r) => r.status)],
  );
}

/** Applies one message; returns false when it had been applied before. */
export async function applyUsage(batch: UsageBatch, ctx: ApplyContext): Promise<boolean> {
  const { daily, cycles, installs } = aggregate(batch);
  return transaction(ctx.db, async (tx) => {
    const marked = await tx.query(
      `INSERT INTO usage_applied (stream, message_id, applied_at) VALUES ($1, $2, to_timestamp($3 / 1000.0))
       ON CONFLICT DO NOTHING`,
      [ctx.stream, ctx.messageId, batch.at],
    );
    if (marked.rowCount === 0) return false;
    await writeDaily(tx, batch.day, daily);
    await writeCycles(tx, cycles);
    await writeInstallations(tx, batch.at, installs);
    return true;
  });
}

/**
 * How long a message's "applied" marker is kept. A stream entry is redelivered within
 * seconds (claim) or not at all; a week covers any outage an operator would sit through.
 */
export const APPLIED_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Deletes markers past the retention, a bounded batch at a time; returns how many went. */
export async function pruneApplied(db: Queryable, nowMs: number, batch = 10_000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.query(
      `DELETE FROM usage_applied WHERE ctid IN (
         SELECT ctid FROM usage_applied WHERE applied_at < to_timestamp($1 / 1000.0) LIMIT $2)`,
      [nowMs - APPLIED_RETENTION_MS, batch],
    );
    total += result.rowCount ?? 0;
    if ((result.rowCount ?? 0) < batch) return total;
  }
}
