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

/**
 * The upserts of the usage rows, their parameters numbered from `at`, and `where` (a
 * condition, or "") between the rows and the conflict clause: one text for the per-table
 * writes below and for the one-statement apply of actors/usage/handler.ts.
 */
const DAILY_TYPES = ["date", "bigint", "bigint", "text", "text", "bigint", "bigint", "bigint"];
const CYCLE_TYPES = ["bigint", "numeric", "bigint"];
const INSTALLATION_TYPES = ["bigint", "text", "text", "numeric", "numeric"];
const LAST_USED_TYPES = ["bigint", "numeric"];
const MARKER_TYPES = ["text", "text", "numeric"];
const params = (at: number, types: readonly string[]) => types.map((type, i) => `$${at + i}::${type}[]`).join(", ");
const filter = (where: string) => (where === "" ? "" : `\n     WHERE ${where}`);

function dailyUpsert(at: number, where = ""): string {
  return `INSERT INTO usage_daily (key_id, org_id, day, endpoint, reason, counted, refused, calls)
     SELECT k, o, d, e, r, c, f, n
     FROM unnest(${params(at, DAILY_TYPES)}) AS t(d, k, o, e, r, c, f, n)${filter(where)}
     ON CONFLICT (key_id, day, endpoint, reason) DO UPDATE SET
       counted = usage_daily.counted + EXCLUDED.counted,
       refused = usage_daily.refused + EXCLUDED.refused,
       calls = usage_daily.calls + EXCLUDED.calls`;
}

function dailyValues(rows: readonly DailyRow[]): unknown[] {
  return [
    rows.map((r) => r.day),
    rows.map((r) => r.key),
    rows.map((r) => r.org),
    rows.map((r) => r.endpoint),
    rows.map((r) => r.reason),
    rows.map((r) => r.counted),
    rows.map((r) => r.refused),
    rows.map((r) => r.calls),
  ];
}

export async function writeDaily(tx: Queryable, rows: DailyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(dailyUpsert(1), dailyValues(rows));
}

export interface CycleRow {
  org: number;
  cycle: number;
  used: number;
}

function cyclesUpsert(at: number, where = ""): string {
  // Same expression as cycleUsed() in shared/accounts/db/orgs.ts, so the projector finds the row.
  return `INSERT INTO cycle_usage (org_id, cycle_start, used)
     SELECT o, to_timestamp(c / 1000.0), u FROM unnest(${params(at, CYCLE_TYPES)}) AS t(o, c, u)${filter(where)}
     ON CONFLICT (org_id, cycle_start) DO UPDATE SET used = cycle_usage.used + EXCLUDED.used`;
}

function cyclesValues(rows: readonly CycleRow[]): unknown[] {
  return [rows.map((r) => r.org), rows.map((r) => r.cycle), rows.map((r) => r.used)];
}

export async function writeCycles(tx: Queryable, rows: CycleRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(cyclesUpsert(1), cyclesValues(rows));
}

export interface InstallationRow {
  key: number;
  install: string;
  status: string;
  /** First and last time seen in the messages applied (clock ms). */
  firstMs: number;
  lastMs: number;
}

function installationsUpsert(at: number, where = ""): string {
  // The first status written wins: an approval or block made meanwhile is kept.
  return `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     SELECT k, i, s, to_timestamp(f / 1000.0), to_timestamp(l / 1000.0)
     FROM unnest(${params(at, INSTALLATION_TYPES)}) AS t(k, i, s, f, l)${filter(where)}
     ON CONFLICT (key_id, install) DO UPDATE SET
       last_seen_at = GREATEST(installations.last_seen_at, EXCLUDED.last_seen_at),
       first_seen_at = LEAST(installations.first_seen_at, EXCLUDED.first_seen_at)`;
}

function installationsValues(rows: readonly InstallationRow[]): unknown[] {
  return [
    rows.map((r) => r.key),
    rows.map((r) => r.install),
    rows.map((r) => r.status),
    rows.map((r) => r.firstMs),
    rows.map((r) => r.lastMs),
  ];
}

export async function writeInstallations(tx: Queryable, rows: InstallationRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(installationsUpsert(1), installationsValues(rows));
}

/**
 * When each key was last used (clock ms), to the minute: a row already stamped in the
 * minute before is left alone, so a busy key costs no write per transaction.
 */
function lastUsedUpsert(at: number, where = ""): string {
  return `INSERT INTO key_last_used (key_id, last_used_at)
     SELECT k, to_timestamp(a / 1000.0) FROM unnest(${params(at, LAST_USED_TYPES)}) AS t(k, a)${filter(where)}
     ON CONFLICT (key_id) DO UPDATE SET last_used_at = EXCLUDED.last_used_at
     WHERE key_last_used.last_used_at < EXCLUDED.last_used_at - interval '1 minute'`;
}

function lastUsedValues(rows: readonly { key: number; atMs: number }[]): unknown[] {
  return [rows.map((r) => r.key), rows.map((r) => r.atMs)];
}

export async function writeLastUsed(tx: Queryable, rows: { key: number; atMs: number }[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(lastUsedUpsert(1), lastUsedValues(rows));
}

export interface AppliedMarker {
  stream: string;
  messageId: string;
  atMs: number;
}

/** The markers' insert, parameters from `at`; `onConflict`: "ON CONFLICT DO NOTHING", or "" to fail on a marker already there. */
function markersInsert(at: number, onConflict: string): string {
  return `INSERT INTO usage_applied (stream, message_id, applied_at)
     SELECT s, m, to_timestamp(a / 1000.0) FROM unnest(${params(at, MARKER_TYPES)}) AS t(s, m, a)${onConflict === "" ? "" : `\n     ${onConflict}`}`;
}

function markersValues(markers: readonly AppliedMarker[]): unknown[] {
  return [markers.map((m) => m.stream), markers.map((m) => m.messageId), markers.map((m) => m.atMs)];
}

/**
 * Marks stream messages applied; returns the indexes (in `markers`) of those marked now,
 * without the ones applied before. `markers` must not repeat a message.
 */
export async function markApplied(tx: Queryable, markers: readonly AppliedMarker[]): Promise<Set<number>> {
  const marked = await tx.query<{ stream: string; message_id: string }>(
    `${markersInsert(1, "ON CONFLICT DO NOTHING")}
     RETURNING stream, message_id`,
    markersValues(markers),
  );
  const index = new Map(markers.map((m, i) => [`${m.stream}\u0000${m.messageId}`, i]));
  return new Set(marked.rows.map((row) => index.get(`${row.stream}\u0000${row.message_id}`) as number));
}

/**
 * The usage actor's fast path (actors/usage/handler.ts): the markers and the summed rows of
 * messages none of which was applied before, in one statement (its own transaction: one round
 * trip, where the long way takes BEGIN, a statement per table and COMMIT). The markers are
 * inserted without ON CONFLICT: a message applied before (a redelivery), or being applied by
 * another consumer that commits first, fails the whole statement on usage_applied's primary
 * key, so nothing of it stays, and the caller applies them the long way, which skips what was
 * applied. (A plain insert also costs PostgreSQL less than ON CONFLICT's speculative one.)
 * Each upsert waits for the one before it (a subquery on its RETURNING rows), so tables are
 * written in the long way's order: markers (a conflict is met before any usage row is
 * locked), daily, cycles, installations, last use. Prepared once per connection.
 */
// Where each upsert's parameters start in the one statement: after the ones before it.
const DAILY_AT = 1 + MARKER_TYPES.length;
const CYCLES_AT = DAILY_AT + DAILY_TYPES.length;
const INSTALLATIONS_AT = CYCLES_AT + CYCLE_TYPES.length;
const LAST_USED_AT = INSTALLATIONS_AT + INSTALLATION_TYPES.length;

const APPLY_NEW = {
  name: "usage-apply-new-v2",
  text: `WITH marked AS (
  ${markersInsert(1, "")}
  RETURNING 1
), daily AS (
  ${dailyUpsert(DAILY_AT, "(SELECT count(*) FROM marked) >= 0")}
  RETURNING 1
), cycles AS (
  ${cyclesUpsert(CYCLES_AT, "(SELECT count(*) FROM daily) >= 0")}
  RETURNING 1
), installs AS (
  ${installationsUpsert(INSTALLATIONS_AT, "(SELECT count(*) FROM cycles) >= 0")}
  RETURNING 1
), last_used AS (
  ${lastUsedUpsert(LAST_USED_AT, "(SELECT count(*) FROM installs) >= 0")}
  RETURNING 1
)
SELECT count(*) AS last_used FROM last_used`,
};

/** The fast path's insert met a marker: some message had been applied (or was being applied) already. */
function appliedBefore(error: unknown): boolean {
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === "23505" && constraint === "usage_applied_pkey";
}

/**
 * Applies `markers` (none repeating another) and their summed rows in one statement; false,
 * and nothing written, when one had been applied before.
 */
export async function applyNewUsage(
  db: Queryable,
  markers: readonly AppliedMarker[],
  rows: {
    daily: readonly DailyRow[];
    cycles: readonly CycleRow[];
    installs: readonly InstallationRow[];
    lastUsed: readonly { key: number; atMs: number }[];
  },
): Promise<boolean> {
  try {
    await db.query({
      name: APPLY_NEW.name,
      text: APPLY_NEW.text,
      values: [
        ...markersValues(markers),
        ...dailyValues(rows.daily),
        ...cyclesValues(rows.cycles),
        ...installationsValues(rows.installs),
        ...lastUsedValues(rows.lastUsed),
      ],
    });
    return true;
  } catch (error) {
    if (appliedBefore(error)) return false;
    throw error;
  }
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
