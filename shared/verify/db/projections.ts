import type { Pool, Queryable } from "../../platform/db/pool.js";

/** The outbox of projections to Redis (migration 0006, shared/verify/snapshots/reconcile.ts). */

export type ProjectionKind = "key" | "org" | "content";

export interface PendingProjection {
  kind: ProjectionKind;
  id: number;
}

/** Marks a projection as owed; returns the mark's sequence number, which only its own success may clear. */
export async function markPending(db: Queryable, kind: ProjectionKind, id: number, nowMs: number): Promise<number> {
  const { rows } = await db.query<{ seq: string }>(
    `INSERT INTO projection_pending (kind, id, since) VALUES ($1, $2, to_timestamp($3 / 1000.0))
     ON CONFLICT (kind, id) DO UPDATE SET seq = projection_pending.seq + 1
     RETURNING seq`,
    [kind, id, nowMs],
  );
  return Number(rows[0].seq);
}

/** Clears the mark if no later change marked it again meanwhile (that one's projection owes its own clear). */
export async function clearPending(db: Queryable, kind: ProjectionKind, id: number, seq: number): Promise<void> {
  await db.query("DELETE FROM projection_pending WHERE kind = $1 AND id = $2 AND seq = $3", [kind, id, seq]);
}

export async function pendingProjections(db: Queryable, limit: number): Promise<PendingProjection[]> {
  const { rows } = await db.query<{ kind: ProjectionKind; id: string }>(
    "SELECT kind, id FROM projection_pending ORDER BY since, kind, id LIMIT $1",
    [limit],
  );
  return rows.map((r) => ({ kind: r.kind, id: Number(r.id) }));
}

/**
 * Runs `fn` in a transaction holding the advisory lock of one entity, so projections of
 * that entity run one at a time (shared/verify/snapshots/projector.ts says why).
 */
export async function withEntityLock(db: Pool, kind: number, id: number, fn: (q: Queryable) => Promise<void>): Promise<void> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [kind, id]);
    await fn(client);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
