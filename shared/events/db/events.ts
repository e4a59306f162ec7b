import type { Queryable } from "../../platform/db/pool.js";
import { isOneOf } from "../../platform/one-of.js";
import type { EventPayloads, EventView } from "../payloads.js";

/** Every event type of interface.md section 6, and the additions of docs/events.md. */
export const EVENT_TYPES = [
  "scan.completed",
  "scan.regression",
  "risk.accepted",
  "risk.unaccepted",
  "risk.expiring",
  "risk.expired",
  "finding.assigned",
  "finding.reopened",
  "finding.overdue",
  "finding.near_target",
  "finding.escalated",
  "finding.status_changed",
  // An addition to interface.md section 6 (docs/events.md): feed clients ignore unknown types.
  "installation.pending",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return isOneOf(EVENT_TYPES, value);
}

export interface EventRow {
  id: number;
  org_id: number;
  type: EventType;
  time: Date;
  domain: string;
  payload: EventPayloads[EventType];
}

/** Channel the relay LISTENs on: NOTIFY is delivered at COMMIT, so it wakes the relay only for committed events. */
export const OUTBOX_CHANNEL = "gateway_event_outbox";

/** Advisory-lock class of the per-organization event order (pg_advisory_xact_lock(class, org)). */
const EVENT_ORDER_LOCK = 0x45564e54; // "EVNT"

/**
 * Writes one event and its outbox row in the caller's transaction.
 *
 * Cursor safety: the feed's cursor is the bigserial id, but ids are drawn before commit,
 * so a transaction that drew id 5 could commit after one that drew id 6, and a reader that
 * had already moved its cursor past 6 would never see 5. The transaction-scoped advisory
 * lock per organization, taken before the id is drawn and held until COMMIT/ROLLBACK, makes
 * the event-writing transactions of one organization draw and commit their ids in the same
 * order: when a reader sees id N of an organization, every smaller id of that organization
 * is already committed (or rolled back for good). The feed is per organization, so that is
 * the order it needs. A transaction that writes events for several organizations must write
 * them in ascending organization order (no deadlock).
 */
export async function insertEvent<K extends EventType>(
  db: Queryable,
  event: { orgId: number; type: K; timeMs: number; domain: string; payload: EventPayloads[K] },
): Promise<number> {
  await db.query("SELECT pg_advisory_xact_lock($1, $2)", [EVENT_ORDER_LOCK, event.orgId]);
  const { rows } = await db.query<{ id: number }>(
    `WITH e AS (
       INSERT INTO events (org_id, type, time, domain, payload) VALUES ($1, $2, to_timestamp($3 / 1000.0), $4, $5) RETURNING id, org_id
     ), o AS (INSERT INTO event_outbox (event_id, org_id) SELECT id, org_id FROM e)
     SELECT id FROM e`,
    [event.orgId, event.type, event.timeMs, event.domain, JSON.stringify(event.payload)],
  );
  await db.query("SELECT pg_notify($1, '')", [OUTBOX_CHANNEL]);
  return rows[0].id;
}

/** The public form of a stored event (section 6): the type's fields, then `id`, `type`, `time`, `domain` (which win). */
export function eventView(row: EventRow): EventView {
  return { ...row.payload, id: row.id, type: row.type, time: row.time.toISOString(), domain: row.domain };
}

/**
 * Takes up to `limit` outbox rows, oldest first, locked so that a second relay skips them,
 * with their events. Run inside a transaction; `deleteOutbox` in the same transaction once
 * they are published.
 */
export async function claimOutbox(tx: Queryable, limit: number): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(
    `SELECT e.id, e.org_id, e.type, e.time, e.domain, e.payload
     FROM (SELECT event_id FROM event_outbox ORDER BY event_id LIMIT $1 FOR UPDATE SKIP LOCKED) o
     JOIN events e ON e.id = o.event_id
     ORDER BY e.id`,
    [limit],
  );
  return rows;
}

export async function deleteOutbox(tx: Queryable, eventIds: readonly number[]): Promise<void> {
  await tx.query("DELETE FROM event_outbox WHERE event_id = ANY($1::bigint[])", [eventIds]);
}

export async function outboxBacklog(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox");
  return rows[0].n;
}

/**
 * One page of an organization's feed: events with id > since, oldest first, at most
 * `limit` (the caller asks for one more to learn whether more remain). See insertEvent
 * for why an id-ordered cursor never skips a later-committing smaller id.
 */
export async function feedPage(
  db: Queryable,
  query: { orgId: number; since: string; limit: number; type: EventType | null },
): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT id, org_id, type, time, domain, payload FROM events
     WHERE org_id = $1 AND id > $2::bigint AND ($3::text IS NULL OR type = $3)
     ORDER BY id LIMIT $4`,
    [query.orgId, query.since, query.type, query.limit],
  );
  return rows;
}

/**
 * Retention: deletes up to `batch` events older than `beforeMs`, oldest first, and says
 * how many went. Small batches keep each transaction's row locks short (the feed and
 * event writers never wait long); two copies of the job running at once only share the
 * work (a row deleted by one is skipped by the other's IN list).
 */
export async function deleteEventsBefore(db: Queryable, beforeMs: number, batch: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM events WHERE id IN (
       SELECT id FROM events WHERE time < to_timestamp($1 / 1000.0) ORDER BY time LIMIT $2
     )`,
    [beforeMs, batch],
  );
  return result.rowCount ?? 0;
}

/** Subscribes a dedicated connection to the outbox's notifications. */
export async function listenOutbox(client: Queryable): Promise<void> {
  await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
}

export async function unlistenOutbox(client: Queryable): Promise<void> {
  await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`);
}
