import type { Queryable } from "../../platform/db/pool.js";

/** A deleted pending installation, with its key's organization (for the Redis hash's name). */
export interface StalePending {
  org_id: number;
  key_id: number;
  install: string;
}

/**
 * Deletes up to `limit` pending installations first seen before `cutoffMs`, and their notices,
 * in one statement (a notice never outlives its row, nor survives a row recorded again).
 * Returns what was deleted.
 */
export async function deleteStalePending(db: Queryable, cutoffMs: number, limit: number): Promise<StalePending[]> {
  const { rows } = await db.query<StalePending>(
    `WITH gone AS (
       DELETE FROM installations i USING (
         SELECT key_id, install FROM installations
          WHERE status = 'pending' AND first_seen_at < to_timestamp($1 / 1000.0)
          ORDER BY key_id, install LIMIT $2
       ) s
       WHERE i.key_id = s.key_id AND i.install = s.install AND i.status = 'pending'
       RETURNING i.key_id, i.install
     ), notices AS (
       DELETE FROM installation_notices n USING gone WHERE n.key_id = gone.key_id AND n.install = gone.install
     )
     SELECT k.org_id::int AS org_id, gone.key_id::int AS key_id, gone.install FROM gone JOIN api_keys k ON k.id = gone.key_id`,
    [cutoffMs, limit],
  );
  return rows;
}
