import type { Queryable } from "../../platform/db/pool.js";

/** The probed services of the status page and their checks (docs/status.md). */

export const SERVICE_KEYS = ["website", "api", "dashboard"] as const;
export type ServiceKey = (typeof SERVICE_KEYS)[number];

export const DEFAULT_SERVICE_NAMES: Readonly<Record<ServiceKey, string>> = { website: "Website", api: "API", dashboard: "Dashboard" };

export interface ServiceRow {
  key: ServiceKey;
  name: string;
  url: string | null;
  updated_at: Date;
}

export interface CheckRow {
  service: ServiceKey;
  at: Date;
  ok: boolean;
  latency_ms: number | null;
  status_code: number | null;
  error: string | null;
}

export interface CheckInput {
  service: ServiceKey;
  slotMs: number;
  atMs: number;
  ok: boolean;
  latencyMs: number | null;
  statusCode: number | null;
  error: string | null;
}

/** Uptime of one service over a range: counts and the median latency of its successful checks. */
export interface UptimeRow {
  service: ServiceKey;
  checks: number;
  up: number;
  median_ms: number | null;
}

export interface DailyRow {
  service: ServiceKey;
  day: string;
  checks: number;
  up: number;
}

export interface MonthlyRow extends UptimeRow {
  month: string;
}

export async function upsertService(db: Queryable, key: ServiceKey, name: string, url: string | null, nowMs: number): Promise<ServiceRow> {
  const { rows } = await db.query<ServiceRow>(
    `INSERT INTO status_services (key, name, url, updated_at) VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))
     ON CONFLICT (key) DO UPDATE SET name = EXCLUDED.name, url = EXCLUDED.url, updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [key, name, url, nowMs],
  );
  return rows[0];
}

export async function listServices(db: Queryable): Promise<ServiceRow[]> {
  const { rows } = await db.query<ServiceRow>(
    "SELECT * FROM status_services ORDER BY array_position(ARRAY['website','api','dashboard'], key)",
  );
  return rows;
}

/**
 * Records one check and adds it to its service's roll-up of that UTC day, in one statement:
 * false when this service's slot already holds one (another prober was first), and then the
 * roll-up is left alone too, so a repeated call never counts twice. A day's first roll-up
 * row starts from the raw checks already recorded that day (checks written before the
 * roll-up existed); later checks add one.
 */
export async function insertCheck(db: Queryable, check: CheckInput): Promise<boolean> {
  const result = await db.query(
    `WITH inserted AS (
       INSERT INTO probes (service, slot_at, at, ok, latency_ms, status_code, error)
       VALUES ($1, to_timestamp($2 / 1000.0), to_timestamp($3 / 1000.0), $4, $5, $6, $7)
       ON CONFLICT (service, slot_at) DO NOTHING
       RETURNING service, (at AT TIME ZONE 'UTC')::date AS day, ok
     ), before AS (
       SELECT count(p.*)::int AS checks, (count(p.*) FILTER (WHERE p.ok))::int AS up
       FROM inserted i LEFT JOIN probes p ON p.service = i.service
         AND p.at >= (i.day::timestamp AT TIME ZONE 'UTC') AND p.at < ((i.day + 1)::timestamp AT TIME ZONE 'UTC')
     )
     INSERT INTO status_daily AS d (service, day, checks, up)
     SELECT i.service, i.day, b.checks + 1, b.up + i.ok::int FROM inserted i, before b
     ON CONFLICT (service, day) DO UPDATE SET checks = d.checks + 1, up = d.up + $4::boolean::int
     RETURNING 1`,
    [check.service, check.slotMs, check.atMs, check.ok, check.latencyMs, check.statusCode, check.error],
  );
  return (result.rowCount ?? 0) > 0;
}

/** The newest checks of every service taken since `sinceMs`, at most `perService` each, newest first. */
export async function recentChecks(db: Queryable, sinceMs: number, untilMs: number, perService: number): Promise<CheckRow[]> {
  const { rows } = await db.query<CheckRow>(
    `SELECT service, at, ok, latency_ms, status_code, error FROM (
       SELECT *, row_number() OVER (PARTITION BY service ORDER BY at DESC, id DESC) AS n FROM probes
       WHERE at >= to_timestamp($1 / 1000.0) AND at <= to_timestamp($2 / 1000.0)
     ) ranked WHERE n <= $3 ORDER BY service, at DESC`,
    [sinceMs, untilMs, perService],
  );
  return rows;
}

export async function uptimeBetween(db: Queryable, fromMs: number, toMs: number): Promise<UptimeRow[]> {
  const { rows } = await db.query<UptimeRow>(
    `SELECT service, count(*)::int AS checks, count(*) FILTER (WHERE ok)::int AS up,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE ok AND latency_ms IS NOT NULL) AS median_ms
     FROM probes WHERE at >= to_timestamp($1 / 1000.0) AND at < to_timestamp($2 / 1000.0) GROUP BY service`,
    [fromMs, toMs],
  );
  return rows;
}

/** Checks per UTC day counted from the raw checks (what the roll-ups must equal). */
export async function dailyUptime(db: Queryable, fromMs: number, toMs: number): Promise<DailyRow[]> {
  const { rows } = await db.query<DailyRow>(
    `SELECT service, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS checks, count(*) FILTER (WHERE ok)::int AS up
     FROM probes WHERE at >= to_timestamp($1 / 1000.0) AND at < to_timestamp($2 / 1000.0) GROUP BY 1, 2 ORDER BY 1, 2`,
    [fromMs, toMs],
  );
  return rows;
}

/** The daily roll-ups of the UTC days from `fromMs` to before `toMs` (day starts), for the 90-day bars. */
export async function dailyRollups(db: Queryable, fromMs: number, toMs: number): Promise<DailyRow[]> {
  const { rows } = await db.query<DailyRow>(
    `SELECT service, to_char(day, 'YYYY-MM-DD') AS day, checks, up FROM status_daily
     WHERE day >= (to_timestamp($1 / 1000.0) AT TIME ZONE 'UTC')::date AND day < (to_timestamp($2 / 1000.0) AT TIME ZONE 'UTC')::date
     ORDER BY 1, 2`,
    [fromMs, toMs],
  );
  return rows;
}

/**
 * Writes the roll-up of every UTC day since `fromMs` that has raw checks but no roll-up row
 * (checks recorded by a process that predates the roll-ups); the number of rows written.
 * A day that has a row is left alone: its row already counts every check insertCheck wrote,
 * and a raw check deleted later does not take it back.
 */
export async function backfillRollups(db: Queryable, fromMs: number): Promise<number> {
  const result = await db.query(
    `INSERT INTO status_daily (service, day, checks, up)
     SELECT p.service, (p.at AT TIME ZONE 'UTC')::date AS day, count(*), count(*) FILTER (WHERE p.ok)
     FROM probes p
     WHERE p.at >= to_timestamp($1 / 1000.0) AND NOT EXISTS (
       SELECT 1 FROM status_daily d WHERE d.service = p.service AND d.day = (p.at AT TIME ZONE 'UTC')::date)
     GROUP BY 1, 2
     ON CONFLICT (service, day) DO NOTHING`,
    [fromMs],
  );
  return result.rowCount ?? 0;
}

/** Checks per UTC month, for the quarterly report. */
export async function monthlyUptime(db: Queryable, fromMs: number, toMs: number): Promise<MonthlyRow[]> {
  const { rows } = await db.query<MonthlyRow>(
    `SELECT service, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, count(*)::int AS checks, count(*) FILTER (WHERE ok)::int AS up,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE ok AND latency_ms IS NOT NULL) AS median_ms
     FROM probes WHERE at >= to_timestamp($1 / 1000.0) AND at < to_timestamp($2 / 1000.0) GROUP BY 1, 2 ORDER BY 1, 2`,
    [fromMs, toMs],
  );
  return rows;
}

/** Drops checks older than `beforeMs` (retention); the number removed. */
export async function pruneChecks(db: Queryable, beforeMs: number): Promise<number> {
  const result = await db.query("DELETE FROM probes WHERE at < to_timestamp($1 / 1000.0)", [beforeMs]);
  await db.query("DELETE FROM status_daily WHERE day < (to_timestamp($1 / 1000.0) AT TIME ZONE 'UTC')::date", [beforeMs]);
  return result.rowCount ?? 0;
}

export interface StatusActivityRow {
  at: Date;
  who: string;
  action: string;
  action_code: string;
  detail: Record<string, unknown>;
}

/** Changes to the status page: activity rows of no organization, newest first. */
export async function statusActivity(db: Queryable, limit: number): Promise<StatusActivityRow[]> {
  const { rows } = await db.query<StatusActivityRow>(
    "SELECT at, who, action, action_code, detail FROM activity WHERE org_id IS NULL ORDER BY at DESC, id DESC LIMIT $1",
    [limit],
  );
  return rows;
}
