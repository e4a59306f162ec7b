import type { EventRow } from "./events.js";
import { boundedError } from "./last-error.js";
import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

/** The destination kinds of operator-api.md (`POST /orgs/:org/siem`). */
export const SIEM_KINDS = ["splunk_hec", "elastic_bulk", "syslog_tcp", "http"] as const;
export type SiemKind = (typeof SIEM_KINDS)[number];

export interface SiemDestinationRow {
  id: number;
  org_id: number;
  kind: SiemKind;
  url: string;
  token_sealed: Buffer | null;
  index_name: string | null;
  delivered: number;
  failed: number;
  last_error: string | null;
  last_error_at: Date | null;
  last_delivered_at: Date | null;
  last_event_id: number;
  created_at: Date;
}

/** The `aad` a destination's sealed token is bound to: it cannot be moved to another row. */
export function tokenAad(orgId: number, id: number): string {
  return `siem:${orgId}:${id}`;
}

/**
 * Inserts a destination; the token is sealed by the caller with the row's id in the aad,
 * so the id is drawn first (nextval) and the row written once.
 */
/** How many SIEM destinations the organization has (ORG_LIMITS). */
export async function countDestinations(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM siem_destinations WHERE org_id = $1", [orgId]);
  return rows[0].n;
}

export async function insertDestination(
  db: Queryable,
  input: {
    orgId: number;
    kind: SiemKind;
    url: string;
    indexName: string | null;
    nowMs: number;
    sealToken: ((id: number) => Buffer) | null;
  },
): Promise<SiemDestinationRow> {
  const { rows: ids } = await db.query<{ id: number }>("SELECT nextval(pg_get_serial_sequence('siem_destinations', 'id')) AS id");
  const id = ids[0].id;
  const { rows } = await db.query<SiemDestinationRow>(
    `INSERT INTO siem_destinations (id, org_id, kind, url, token_sealed, index_name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0)) RETURNING *`,
    [id, input.orgId, input.kind, input.url, input.sealToken ? input.sealToken(id) : null, input.indexName, input.nowMs],
  );
  return rows[0];
}

export async function findDestination(db: Queryable, orgId: number, id: number): Promise<SiemDestinationRow | null> {
  const { rows } = await db.query<SiemDestinationRow>("SELECT * FROM siem_destinations WHERE org_id = $1 AND id = $2", [orgId, id]);
  return rows[0] ?? null;
}

export async function destinationById(db: Queryable, id: number): Promise<SiemDestinationRow | null> {
  const { rows } = await db.query<SiemDestinationRow>("SELECT * FROM siem_destinations WHERE id = $1", [id]);
  return rows[0] ?? null;
}

/** A page of the organization's destinations, in the order they were added. */
export async function listDestinations(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<SiemDestinationRow>> {
  const [total, found] = await Promise.all([
    countDestinations(db, orgId),
    db.query<SiemDestinationRow>("SELECT * FROM siem_destinations WHERE org_id = $1 ORDER BY id LIMIT $2 OFFSET $3", [
      orgId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total, rows: found.rows };
}

/** Every destination of every organization (the pusher's view). */
export async function allDestinations(db: Queryable): Promise<SiemDestinationRow[]> {
  const { rows } = await db.query<SiemDestinationRow>("SELECT * FROM siem_destinations ORDER BY id");
  return rows;
}

/** Which of `ids` name a destination now (the orphan sweep's last look before a DEL). */
export async function existingDestinationIds(db: Queryable, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: number }>("SELECT id FROM siem_destinations WHERE id = ANY($1::bigint[])", [ids]);
  return new Set(rows.map((row) => Number(row.id)));
}

export async function deleteDestination(db: Queryable, orgId: number, id: number): Promise<boolean> {
  const result = await db.query("DELETE FROM siem_destinations WHERE org_id = $1 AND id = $2", [orgId, id]);
  return (result.rowCount ?? 0) > 0;
}

/** A batch reached the destination: `count` events, the highest id among them. */
export async function recordDelivered(db: Queryable, id: number, count: number, maxEventId: number, atMs: number): Promise<void> {
  await db.query(
    `UPDATE siem_destinations SET delivered = delivered + $2, last_event_id = GREATEST(last_event_id, $3),
       last_delivered_at = to_timestamp($4 / 1000.0) WHERE id = $1`,
    [id, count, maxEventId, atMs],
  );
}

/** A batch failed; `exhausted` of its events ran out of attempts and go to the dead letters. The error is stored bounded (last-error.ts). */
export async function recordFailure(db: Queryable, id: number, error: string, exhausted: number, atMs: number): Promise<void> {
  await db.query(
    `UPDATE siem_destinations SET failed = failed + $3, last_error = $2, last_error_at = to_timestamp($4 / 1000.0) WHERE id = $1`,
    [id, boundedError(error), exhausted, atMs],
  );
}

/**
 * The events a destination missed when its stream was trimmed before its loop read them:
 * the organization's events with `afterId` < id <= `upToId` (no upper bound when null) but
 * those in `except` (still on the stream: the loop reads them), and with `sinceMs` (a
 * destination that never delivered anything) only those from its creation on, oldest
 * first, at most `limit`. The id order is the organization's commit order (insertEvent's
 * advisory lock), so paging by id never skips one.
 */
export async function eventsToReplay(
  db: Queryable,
  query: { orgId: number; afterId: number; upToId: number | null; except: readonly number[]; sinceMs: number | null; limit: number },
): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT id, org_id, type, time, domain, payload FROM events
     WHERE org_id = $1 AND id > $2 AND ($3::bigint IS NULL OR id <= $3) AND NOT (id = ANY($4::bigint[]))
       AND ($5::float8 IS NULL OR time >= to_timestamp($5 / 1000.0))
     ORDER BY id LIMIT $6`,
    [query.orgId, query.afterId, query.upToId, query.except, query.sinceMs, query.limit],
  );
  return rows;
}

/** The organization's events among `ids` (those still stored), oldest first. */
export async function eventsByIds(db: Queryable, orgId: number, ids: readonly number[]): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT id, org_id, type, time, domain, payload FROM events WHERE org_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`,
    [orgId, ids],
  );
  return rows;
}
