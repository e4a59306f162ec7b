import { boundedError } from "./last-error.js";
import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

export interface WebhookRow {
  id: number;
  org_id: number;
  url: string;
  secret_sealed: Buffer;
  created_at: Date;
}

/** Where a webhook's sealed secret is bound (seal's `aad`): it cannot be moved to another row. */
export const webhookSecretAad = (orgId: number, webhookId: number) => `webhook:${orgId}:${webhookId}`;

/** Draws the id first so the secret can be sealed to it before the row exists. */
export async function nextWebhookId(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ id: string }>("SELECT nextval(pg_get_serial_sequence('webhooks', 'id')) AS id");
  return Number(rows[0].id);
}

/** How many webhooks the organization has (ORG_LIMITS). */
export async function countWebhooks(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks WHERE org_id = $1", [orgId]);
  return rows[0].n;
}

export async function insertWebhook(
  db: Queryable,
  webhook: { id: number; orgId: number; url: string; secretSealed: Buffer; nowMs: number },
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    "INSERT INTO webhooks (id, org_id, url, secret_sealed, created_at) VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0)) RETURNING *",
    [webhook.id, webhook.orgId, webhook.url, webhook.secretSealed, webhook.nowMs],
  );
  return rows[0];
}

export interface WebhookSummary {
  id: number;
  url: string;
  created_at: Date;
  delivered: number;
  pending: number;
  failed: number;
  last_error: string | null;
  last_delivered_at: Date | null;
}

/** A page of the organization's webhooks with their delivery counts, in the order they were added. */
export async function listWebhooks(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<WebhookSummary>> {
  const [total, found] = await Promise.all([
    countWebhooks(db, orgId),
    db.query<WebhookSummary>(
      `SELECT w.id, w.url, w.created_at,
         count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
         count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
         (SELECT last_error FROM webhook_deliveries e WHERE e.webhook_id = w.id AND e.last_error IS NOT NULL
          ORDER BY e.created_at DESC, e.id DESC LIMIT 1) AS last_error,
         max(d.delivered_at) AS last_delivered_at
       FROM webhooks w LEFT JOIN webhook_deliveries d ON d.webhook_id = w.id
       WHERE w.org_id = $1 GROUP BY w.id ORDER BY w.id LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset],
    ),
  ]);
  return { total, rows: found.rows };
}

export async function findWebhook(db: Queryable, orgId: number, id: number): Promise<WebhookRow | null> {
  const { rows } = await db.query<WebhookRow>("SELECT * FROM webhooks WHERE org_id = $1 AND id = $2", [orgId, id]);
  return rows[0] ?? null;
}

export async function deleteWebhook(db: Queryable, orgId: number, id: number): Promise<WebhookRow | null> {
  const { rows } = await db.query<WebhookRow>("DELETE FROM webhooks WHERE org_id = $1 AND id = $2 RETURNING *", [orgId, id]);
  return rows[0] ?? null;
}

/** The delivery id of one event to one webhook: the same on every attempt, so receivers can de-duplicate. */
export const deliveryId = (eventId: number, webhookId: number) => `whd_${eventId}_${webhookId}`;

/**
 * One pending delivery per webhook of the organization; an event seen again (the stream
 * delivers at least once) adds nothing. `body` is built per webhook from its delivery id.
 */
export async function enqueueDeliveries(
  db: Queryable,
  input: { orgId: number; eventId: number; eventType: string; bodyFor: (deliveryId: string) => string; nowMs: number },
): Promise<number> {
  const { rows: hooks } = await db.query<{ id: number }>("SELECT id FROM webhooks WHERE org_id = $1 ORDER BY id", [input.orgId]);
  let added = 0;
  for (const hook of hooks) {
    const id = deliveryId(input.eventId, hook.id);
    const { rowCount } = await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, org_id, event_id, event_type, body, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0), to_timestamp($7 / 1000.0)) ON CONFLICT DO NOTHING`,
      [id, hook.id, input.orgId, input.eventId, input.eventType, input.bodyFor(id), input.nowMs],
    );
    added += rowCount ?? 0;
  }
  return added;
}

export interface DeliveryJob {
  id: string;
  webhook_id: number;
  org_id: number;
  event_id: number;
  body: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret_sealed: Buffer;
}

/**
 * Takes up to `limit` due deliveries, at most one per webhook (the caller claims again
 * while there is room), skipping the webhooks in `busy` (at their concurrency), and leases them until `leaseUntilMs` so another delivery loop does not
 * take them meanwhile (a crashed loop's lease runs out and the delivery is retried).
 */
export async function claimDeliveries(
  db: Queryable,
  nowMs: number,
  leaseUntilMs: number,
  busy: readonly number[],
  limit: number,
): Promise<DeliveryJob[]> {
  const { rows } = await db.query<DeliveryJob>(
    `WITH candidates AS (
       SELECT DISTINCT ON (webhook_id) id, next_attempt_at FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at <= to_timestamp($1 / 1000.0) AND NOT (webhook_id = ANY($3::bigint[]))
       ORDER BY webhook_id, next_attempt_at, id
     ), due AS (
       SELECT d.id FROM webhook_deliveries d JOIN candidates c ON c.id = d.id
       WHERE d.status = 'pending' AND d.next_attempt_at <= to_timestamp($1 / 1000.0)
       ORDER BY c.next_attempt_at, d.id LIMIT $4 FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET next_attempt_at = to_timestamp($2 / 1000.0), attempts = d.attempts + 1
     FROM due, webhooks w WHERE d.id = due.id AND w.id = d.webhook_id
     RETURNING d.id, d.webhook_id, d.org_id, d.event_id, d.body, d.attempts, d.created_at, w.url, w.secret_sealed`,
    [nowMs, leaseUntilMs, busy, limit],
  );
  return rows;
}

export type AttemptOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; status: number | null; error: string; nextAttemptMs: number }
  | { kind: "failed"; status: number | null; error: string };

/** One attempt's outcome; an error is stored bounded (last-error.ts). */
export async function recordAttempt(db: Queryable, id: string, outcome: AttemptOutcome, nowMs: number): Promise<void> {
  if (outcome.kind === "delivered") {
    await db.query(
      `UPDATE webhook_deliveries SET status = 'delivered', last_status = $2, delivered_at = to_timestamp($3 / 1000.0) WHERE id = $1`,
      [id, outcome.status, nowMs],
    );
  } else if (outcome.kind === "retry") {
    await db.query(
      `UPDATE webhook_deliveries SET last_status = $2, last_error = $3, next_attempt_at = to_timestamp($4 / 1000.0) WHERE id = $1 AND status = 'pending'`,
      [id, outcome.status, boundedError(outcome.error), outcome.nextAttemptMs],
    );
  } else {
    await db.query(`UPDATE webhook_deliveries SET status = 'failed', last_status = $2, last_error = $3 WHERE id = $1`, [
      id,
      outcome.status,
      boundedError(outcome.error),
    ]);
  }
}

export interface DeliveryRow {
  id: string;
  event_id: number;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

/** The delivery log of one webhook, newest first. */
export async function deliveriesOf(db: Queryable, webhookId: number, limit: number): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT id, event_id, event_type, status, attempts, last_status, last_error, next_attempt_at, created_at, delivered_at
     FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, event_id DESC LIMIT $2`,
    [webhookId, limit],
  );
  return rows;
}

/** Marks an e-mail of an event to a recipient as sent; false when it already was (a duplicate event). */
export async function claimMail(db: Queryable, eventId: number, recipient: string, nowMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    "INSERT INTO notifier_mail (event_id, recipient, sent_at) VALUES ($1, $2, to_timestamp($3 / 1000.0)) ON CONFLICT DO NOTHING",
    [eventId, recipient, nowMs],
  );
  return (rowCount ?? 0) > 0;
}
