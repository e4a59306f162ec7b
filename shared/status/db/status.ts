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
  const { rows } = await db.query<ServiceRow>("SELECT * FROM status_services ORDER BY array_position(ARRAY['website','api','dashboard'], key)");
  return rows;
}

/** Records one check; false when this service's slot already holds one (another prober was first). */
export async function insertCheck(db: Queryable, check: CheckInput): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO probes (service, slot_at, at, ok, latency_ms, status_code, error)
     VALUES ($1, to_timestamp($2 / 1000.0), to_timestamp($3 / 1000.0), $4, $5, $6, $7)
     ON CONFLICT (service, slot_at) DO NOTHING`,
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

/** Checks per UTC day, for the 90-day bars. */
export async function dailyUptime(db: Queryable, fromMs: number, toMs: number): Promise<DailyRow[]> {
  const { rows } = await db.query<DailyRow>(
    `SELECT service, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS checks, count(*) FILTER (WHERE ok)::int AS up
     FROM probes WHERE at >= to_timestamp($1 / 1000.0) AND at < to_timestamp($2 / 1000.0) GROUP BY 1, 2 ORDER BY 1, 2`,
    [fromMs, toMs],
  );
  return rows;
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
