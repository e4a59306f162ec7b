import type { Queryable } from "../../platform/db/pool.js";
import type { ServiceKey } from "./status.js";

/** Incidents, their updates and planned maintenance of the status page (docs/status.md). */

export const INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved"] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];
export type Impact = "minor" | "major";

export interface IncidentUpdateRow {
  id: number;
  incident_id: number;
  status: IncidentStatus;
  body: string;
  at: Date;
}

export interface IncidentRow {
  id: number;
  title: string;
  impact: Impact;
  affects: ServiceKey[];
  status: IncidentStatus;
  postmortem: string | null;
  created_at: Date;
  resolved_at: Date | null;
  updated_at: Date | null;
}

export interface Incident extends IncidentRow {
  /** Newest first. */
  updates: IncidentUpdateRow[];
}

export interface MaintenanceRow {
  id: number;
  title: string;
  body: string;
  affects: ServiceKey[];
  starts_at: Date;
  ends_at: Date;
  created_at: Date;
  updated_at: Date | null;
  cancelled_at: Date | null;
}

const ts = (ms: number) => `to_timestamp(${Number(ms)} / 1000.0)`;

async function withUpdates(db: Queryable, incidents: IncidentRow[]): Promise<Incident[]> {
  if (incidents.length === 0) return [];
  const { rows } = await db.query<IncidentUpdateRow>(
    "SELECT * FROM incident_updates WHERE incident_id = ANY($1::bigint[]) ORDER BY at DESC, id DESC",
    [incidents.map((i) => i.id)],
  );
  return incidents.map((incident) => ({ ...incident, updates: rows.filter((u) => u.incident_id === incident.id) }));
}

export async function createIncident(
  db: Queryable,
  input: { title: string; impact: Impact; affects: ServiceKey[]; status: IncidentStatus; body: string; nowMs: number },
): Promise<Incident> {
  const { rows } = await db.query<IncidentRow>(
    `INSERT INTO incidents (title, impact, affects, status, created_at, updated_at, resolved_at)
     VALUES ($1, $2, $3, $4, ${ts(input.nowMs)}, ${ts(input.nowMs)}, CASE WHEN $4 = 'resolved' THEN ${ts(input.nowMs)} END)
     RETURNING *`,
    [input.title, input.impact, input.affects, input.status],
  );
  await db.query(`INSERT INTO incident_updates (incident_id, status, body, at) VALUES ($1, $2, $3, ${ts(input.nowMs)})`, [
    rows[0].id,
    input.status,
    input.body,
  ]);
  return (await findIncident(db, rows[0].id)) as Incident;
}

/** The incident, locked for the rest of the transaction when `forUpdate`. */
export async function findIncident(db: Queryable, id: number, forUpdate = false): Promise<Incident | null> {
  const { rows } = await db.query<IncidentRow>(`SELECT * FROM incidents WHERE id = $1${forUpdate ? " FOR UPDATE" : ""}`, [id]);
  return rows[0] ? (await withUpdates(db, rows))[0] : null;
}

/** Adds an update and moves the incident to its status; resolving stamps resolved_at. */
export async function addIncidentUpdate(db: Queryable, id: number, status: IncidentStatus, body: string, nowMs: number): Promise<Incident> {
  await db.query(`INSERT INTO incident_updates (incident_id, status, body, at) VALUES ($1, $2, $3, ${ts(nowMs)})`, [id, status, body]);
  await db.query(
    `UPDATE incidents SET status = $2, updated_at = ${ts(nowMs)},
       resolved_at = CASE WHEN $2 = 'resolved' THEN COALESCE(resolved_at, ${ts(nowMs)}) ELSE NULL END WHERE id = $1`,
    [id, status],
  );
  return (await findIncident(db, id)) as Incident;
}

export async function patchIncident(
  db: Queryable,
  id: number,
  fields: { title?: string; impact?: Impact; affects?: ServiceKey[]; postmortem?: string | null },
  nowMs: number,
): Promise<Incident | null> {
  const { rows } = await db.query<IncidentRow>(
    `UPDATE incidents SET
       title = CASE WHEN $2 THEN $3 ELSE title END,
       impact = CASE WHEN $4 THEN $5 ELSE impact END,
       affects = CASE WHEN $6 THEN $7::text[] ELSE affects END,
       postmortem = CASE WHEN $8 THEN $9 ELSE postmortem END,
       updated_at = ${ts(nowMs)}
     WHERE id = $1 RETURNING *`,
    [
      id,
      "title" in fields,
      fields.title ?? null,
      "impact" in fields,
      fields.impact ?? null,
      "affects" in fields,
      fields.affects ?? null,
      "postmortem" in fields,
      fields.postmortem ?? null,
    ],
  );
  return rows[0] ? (await withUpdates(db, rows))[0] : null;
}

/** Open incidents, and incidents resolved at or after `resolvedSinceMs`; newest first. */
export async function currentIncidents(db: Queryable, resolvedSinceMs: number): Promise<Incident[]> {
  const { rows } = await db.query<IncidentRow>(
    `SELECT * FROM incidents WHERE resolved_at IS NULL OR resolved_at >= ${ts(resolvedSinceMs)} ORDER BY created_at DESC, id DESC`,
  );
  return withUpdates(db, rows);
}

/** The newest `limit` incidents whatever their state (the feed, the admin list). */
export async function latestIncidents(db: Queryable, limit: number): Promise<Incident[]> {
  const { rows } = await db.query<IncidentRow>("SELECT * FROM incidents ORDER BY created_at DESC, id DESC LIMIT $1", [limit]);
  return withUpdates(db, rows);
}

/** Incidents that were open at some time in [fromMs, toMs). */
export async function incidentsBetween(db: Queryable, fromMs: number, toMs: number): Promise<Incident[]> {
  const { rows } = await db.query<IncidentRow>(
    `SELECT * FROM incidents WHERE created_at < ${ts(toMs)} AND (resolved_at IS NULL OR resolved_at >= ${ts(fromMs)})
     ORDER BY created_at, id`,
  );
  return withUpdates(db, rows);
}

export async function createMaintenance(
  db: Queryable,
  input: { title: string; body: string; affects: ServiceKey[]; startsMs: number; endsMs: number; nowMs: number },
): Promise<MaintenanceRow> {
  const { rows } = await db.query<MaintenanceRow>(
    `INSERT INTO maintenance (title, body, affects, starts_at, ends_at, created_at, updated_at)
     VALUES ($1, $2, $3, ${ts(input.startsMs)}, ${ts(input.endsMs)}, ${ts(input.nowMs)}, ${ts(input.nowMs)}) RETURNING *`,
    [input.title, input.body, input.affects],
  );
  return rows[0];
}

export async function findMaintenance(db: Queryable, id: number, forUpdate = false): Promise<MaintenanceRow | null> {
  const { rows } = await db.query<MaintenanceRow>(`SELECT * FROM maintenance WHERE id = $1${forUpdate ? " FOR UPDATE" : ""}`, [id]);
  return rows[0] ?? null;
}

export async function updateMaintenance(
  db: Queryable,
  id: number,
  fields: { title: string; body: string; affects: ServiceKey[]; startsMs: number; endsMs: number },
  nowMs: number,
): Promise<MaintenanceRow> {
  const { rows } = await db.query<MaintenanceRow>(
    `UPDATE maintenance SET title = $2, body = $3, affects = $4, starts_at = ${ts(fields.startsMs)}, ends_at = ${ts(fields.endsMs)},
       updated_at = ${ts(nowMs)} WHERE id = $1 RETURNING *`,
    [id, fields.title, fields.body, fields.affects],
  );
  return rows[0];
}

export async function cancelMaintenance(db: Queryable, id: number, nowMs: number): Promise<MaintenanceRow> {
  const { rows } = await db.query<MaintenanceRow>(
    `UPDATE maintenance SET cancelled_at = ${ts(nowMs)}, updated_at = ${ts(nowMs)} WHERE id = $1 RETURNING *`,
    [id],
  );
  return rows[0];
}

/** Maintenance not cancelled and not over at `nowMs` (running or upcoming), soonest first. */
export async function activeMaintenance(db: Queryable, nowMs: number): Promise<MaintenanceRow[]> {
  const { rows } = await db.query<MaintenanceRow>(
    `SELECT * FROM maintenance WHERE cancelled_at IS NULL AND ends_at > ${ts(nowMs)} ORDER BY starts_at, id`,
  );
  return rows;
}

/** The newest `limit` maintenance windows whatever their state (the feed, the admin list). */
export async function latestMaintenance(db: Queryable, limit: number): Promise<MaintenanceRow[]> {
  const { rows } = await db.query<MaintenanceRow>("SELECT * FROM maintenance ORDER BY starts_at DESC, id DESC LIMIT $1", [limit]);
  return rows;
}

/** Maintenance (not cancelled) overlapping [fromMs, toMs). */
export async function maintenanceBetween(db: Queryable, fromMs: number, toMs: number): Promise<MaintenanceRow[]> {
  const { rows } = await db.query<MaintenanceRow>(
    `SELECT * FROM maintenance WHERE cancelled_at IS NULL AND starts_at < ${ts(toMs)} AND ends_at > ${ts(fromMs)} ORDER BY starts_at, id`,
  );
  return rows;
}
