import type { Queryable } from "../../platform/db/pool.js";

/** A pending installation, with its key's organization (for the Redis hash's name). */
export interface StalePending {
  org_id: number;
  key_id: number;
  install: string;
}

/** Pending installations last seen before `cutoffMs`, in (key, install) order after `after`. */
export async function stalePendingInstallations(
  db: Queryable,
  cutoffMs: number,
  after: { keyId: number; install: string },
  limit: number,
): Promise<StalePending[]> {
  const { rows } = await db.query<StalePending>(
    `SELECT k.org_id::int AS org_id, i.key_id::int AS key_id, i.install
       FROM installations i JOIN api_keys k ON k.id = i.key_id
      WHERE i.status = 'pending' AND i.last_seen_at < to_timestamp($1 / 1000.0) AND (i.key_id, i.install) > ($2, $3)
      ORDER BY i.key_id, i.install LIMIT $4`,
    [cutoffMs, after.keyId, after.install, limit],
  );
  return rows;
}

/**
 * Deletes those of `rows` still pending and still last seen before `cutoffMs` (a sighting
 * or a decision since keeps a row), and their notices. Returns how many were deleted.
 */
export async function deleteStalePending(db: Queryable, rows: readonly StalePending[], cutoffMs: number): Promise<number> {
  const removed = await db.query<{ key_id: string; install: string }>(
    `DELETE FROM installations i USING unnest($1::bigint[], $2::text[]) AS t(k, n)
      WHERE i.key_id = t.k AND i.install = t.n AND i.status = 'pending' AND i.last_seen_at < to_timestamp($3 / 1000.0)
      RETURNING i.key_id, i.install`,
    [rows.map((r) => r.key_id), rows.map((r) => r.install), cutoffMs],
  );
  if (removed.rows.length > 0) {
    await db.query(
      "DELETE FROM installation_notices n USING unnest($1::bigint[], $2::text[]) AS t(k, i) WHERE n.key_id = t.k AND n.install = t.i",
      [removed.rows.map((r) => r.key_id), removed.rows.map((r) => r.install)],
    );
  }
  return removed.rows.length;
}
