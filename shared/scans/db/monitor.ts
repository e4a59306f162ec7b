import type { Queryable } from "../../platform/db/pool.js";

/** Verified domains the monitor has no schedule row for yet. */
export async function unscheduledDomains(db: Queryable): Promise<{ org_id: number; domain: string }[]> {
  const { rows } = await db.query<{ org_id: number; domain: string }>(
    `SELECT d.org_id, d.name AS domain FROM domains d
     LEFT JOIN monitor_schedule s ON s.org_id = d.org_id AND s.domain = d.name
     WHERE d.verified AND s.org_id IS NULL ORDER BY d.org_id, d.name LIMIT 10000`,
  );
  return rows.map((r) => ({ org_id: Number(r.org_id), domain: r.domain }));
}

export async function scheduleDomain(db: Queryable, orgId: number, domain: string, nextRunMs: number): Promise<void> {
  await db.query(
    "INSERT INTO monitor_schedule (org_id, domain, next_run_at) VALUES ($1, $2, to_timestamp($3 / 1000.0)) ON CONFLICT DO NOTHING",
    [orgId, domain, nextRunMs],
  );
}

/** Drops the rows of domains no longer verified (or deleted). */
export async function pruneSchedule(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM monitor_schedule s WHERE NOT EXISTS (
       SELECT 1 FROM domains d WHERE d.org_id = s.org_id AND d.name = s.domain AND d.verified)`,
  );
}

export interface DueScan {
  org_id: number;
  domain: string;
  /** The slot this run belongs to (its scheduled time): part of the job id, so a repeat is stored once. */
  slot_ms: number;
}

/**
 * Claims up to `limit` due domains and moves each to its next slot (the same offset in a
 * later period), locked so two monitors never claim one domain. Run in the transaction
 * that publishes their scan jobs.
 */
export async function claimDueScans(tx: Queryable, nowMs: number, periodMs: number, limit: number): Promise<DueScan[]> {
  const { rows } = await tx.query<{ org_id: string; domain: string; slot_ms: string }>(
    `WITH due AS (
       SELECT org_id, domain, next_run_at FROM monitor_schedule WHERE next_run_at <= to_timestamp($1 / 1000.0)
       ORDER BY next_run_at LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     UPDATE monitor_schedule s SET last_run_at = to_timestamp($1 / 1000.0),
       next_run_at = due.next_run_at + make_interval(secs => ($2 / 1000.0) * (floor(extract(epoch FROM to_timestamp($1 / 1000.0) - due.next_run_at) * 1000 / $2) + 1))
     FROM due WHERE s.org_id = due.org_id AND s.domain = due.domain
     RETURNING s.org_id, s.domain, (extract(epoch FROM due.next_run_at) * 1000)::bigint AS slot_ms`,
    [nowMs, periodMs, limit],
  );
  return rows.map((r) => ({ org_id: Number(r.org_id), domain: r.domain, slot_ms: Number(r.slot_ms) }));
}
