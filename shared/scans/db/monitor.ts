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
 * Claims up to `limit` due domains, at most `perOrg` of one organization (its earliest due:
 * the rest stay due for the next run), locked so two monitors never claim one domain, and
 * moves each to the slot `nextRunMs` names for it. Run in the transaction that publishes
 * their scan jobs.
 */
export async function claimDueScans(
  tx: Queryable,
  claim: { nowMs: number; limit: number; perOrg: number; nextRunMs: (orgId: number, domain: string) => number },
): Promise<DueScan[]> {
  const { rows } = await tx.query<{ org_id: string; domain: string; slot_ms: string }>(
    `WITH ranked AS (
       SELECT org_id, domain, row_number() OVER (PARTITION BY org_id ORDER BY next_run_at, domain) AS nth
       FROM monitor_schedule WHERE next_run_at <= to_timestamp($1 / 1000.0)
     )
     SELECT s.org_id, s.domain, (extract(epoch FROM s.next_run_at) * 1000)::bigint AS slot_ms
     FROM monitor_schedule s JOIN ranked r ON r.org_id = s.org_id AND r.domain = s.domain
     WHERE r.nth <= $3 AND s.next_run_at <= to_timestamp($1 / 1000.0)
     ORDER BY s.next_run_at, s.org_id, s.domain LIMIT $2
     FOR UPDATE OF s SKIP LOCKED`,
    [claim.nowMs, claim.limit, claim.perOrg],
  );
  const due = rows.map((r) => ({ org_id: Number(r.org_id), domain: r.domain, slot_ms: Number(r.slot_ms) }));
  if (due.length === 0) return due;
  await tx.query(
    `UPDATE monitor_schedule s SET last_run_at = to_timestamp($1 / 1000.0), next_run_at = to_timestamp(u.next_ms / 1000.0)
     FROM unnest($2::bigint[], $3::text[], $4::bigint[]) AS u(org_id, domain, next_ms)
     WHERE s.org_id = u.org_id AND s.domain = u.domain`,
    [claim.nowMs, due.map((d) => d.org_id), due.map((d) => d.domain), due.map((d) => claim.nextRunMs(d.org_id, d.domain))],
  );
  return due;
}
