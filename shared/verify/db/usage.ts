import type { Queryable } from "../../platform/db/pool.js";

/**
 * The usage aggregate (usage_daily, cycle_usage, installations first and last seen, and the
 * usage_applied markers that make a redelivered message change nothing). Written by the
 * usage actor, one transaction per group of messages read together, rows in a fixed order
 * (its handler says why).
 */

export interface DailyRow {
  day: string;
  key: number;
  org: number;
  endpoint: string;
  reason: string;
  counted: number;
  refused: number;
  calls: number;
}

export async function writeDaily(tx: Queryable, rows: DailyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO usage_daily (key_id, org_id, day, endpoint, reason, counted, refused, calls)
     SELECT k, o, d, e, r, c, f, n
     FROM unnest($1::date[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) AS t(d, k, o, e, r, c, f, n)
     ON CONFLICT (key_id, day, endpoint, reason) DO UPDATE SET
       counted = usage_daily.counted + EXCLUDED.counted,
       refused = usage_daily.refused + EXCLUDED.refused,
       calls = usage_daily.calls + EXCLUDED.calls`,
    [
      rows.map((r) => r.day),
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

export async function writeCycles(tx: Queryable, rows: { org: number; cycle: number; used: number }[]): Promise<void> {
  if (rows.length === 0) return;
  // Same expression as cycleUsed() in shared/accounts/db/orgs.ts, so the projector finds the row.
  await tx.query(
    `INSERT INTO cycle_usage (org_id, cycle_start, used)
     SELECT o, to_timestamp(c / 1000.0), u FROM unnest($1::bigint[], $2::numeric[], $3::bigint[]) AS t(o, c, u)
     ON CONFLICT (org_id, cycle_start) DO UPDATE SET used = cycle_usage.used + EXCLUDED.used`,
    [rows.map((r) => r.org), rows.map((r) => r.cycle), rows.map((r) => r.used)],
  );
}

export interface InstallationRow {
  key: number;
  install: string;
  status: string;
  /** First and last time seen in the messages applied (clock ms). */
  firstMs: number;
  lastMs: number;
}

export async function writeInstallations(tx: Queryable, rows: InstallationRow[]): Promise<void> {
  if (rows.length === 0) return;
  // The first status written wins: an approval or block made meanwhile is kept.
  await tx.query(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     SELECT k, i, s, to_timestamp(f / 1000.0), to_timestamp(l / 1000.0)
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::numeric[], $5::numeric[]) AS t(k, i, s, f, l)
     ON CONFLICT (key_id, install) DO UPDATE SET
       last_seen_at = GREATEST(installations.last_seen_at, EXCLUDED.last_seen_at),
       first_seen_at = LEAST(installations.first_seen_at, EXCLUDED.first_seen_at)`,
    [rows.map((r) => r.key), rows.map((r) => r.install), rows.map((r) => r.status), rows.map((r) => r.firstMs), rows.map((r) => r.lastMs)],
  );
}

/**
 * When each key was last used (clock ms), to the minute: a row already stamped in the
 * minute before is left alone, so a busy key costs no write per transaction.
 */
export async function writeLastUsed(tx: Queryable, rows: { key: number; atMs: number }[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO key_last_used (key_id, last_used_at)
     SELECT k, to_timestamp(a / 1000.0) FROM unnest($1::bigint[], $2::numeric[]) AS t(k, a)
     ON CONFLICT (key_id) DO UPDATE SET last_used_at = EXCLUDED.last_used_at
     WHERE key_last_used.last_used_at < EXCLUDED.last_used_at - interval '1 minute'`,
    [rows.map((r) => r.key), rows.map((r) => r.atMs)],
  );
}

export interface AppliedMarker {
  stream: string;
  messageId: string;
  atMs: number;
}

/**
 * Marks stream messages applied; returns the indexes (in `markers`) of those marked now,
 * without the ones applied before. `markers` must not repeat a message.
 */
export async function markApplied(tx: Queryable, markers: readonly AppliedMarker[]): Promise<Set<number>> {
  const marked = await tx.query<{ stream: string; message_id: string }>(
    `INSERT INTO usage_applied (stream, message_id, applied_at)
     SELECT s, m, to_timestamp(a / 1000.0) FROM unnest($1::text[], $2::text[], $3::numeric[]) AS t(s, m, a)
     ON CONFLICT DO NOTHING
     RETURNING stream, message_id`,
    [markers.map((m) => m.stream), markers.map((m) => m.messageId), markers.map((m) => m.atMs)],
  );
  const index = new Map(markers.map((m, i) => [`${m.stream}\u0000${m.messageId}`, i]));
  return new Set(marked.rows.map((row) => index.get(`${row.stream}\u0000${row.message_id}`) as number));
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

export interface UsageRow {
  day: string;
  endpoint: string;
  reason: string;
  counted: number;
  refused: number;
  calls: number;
}

/** One key's usage_daily rows between two days (inclusive), in order. */
export async function dailyUsageOfKey(db: Queryable, keyId: number, from: string, to: string): Promise<UsageRow[]> {
  const { rows } = await db.query<UsageRow>(
    `SELECT day, endpoint, reason, counted, refused, calls FROM usage_daily
     WHERE key_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day, endpoint, reason`,
    [keyId, from, to],
  );
  return rows;
}
