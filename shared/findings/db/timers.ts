import type { Queryable } from "../../platform/db/pool.js";

/**
 * The assignment-timer's claims. Each crossing is claimed by a conditional UPDATE of its
 * `*_notified_at` column (`... IS NULL` in the WHERE clause) in the transaction that also
 * writes its event: a second timer process blocks on the row lock, then re-evaluates the
 * WHERE clause against the committed row and claims nothing. So each crossing is emitted
 * exactly once, whatever the number of timer processes.
 */

export type FindingCrossing = "overdue" | "near_target" | "escalated";

export interface CrossingRules {
  nowMs: number;
  /** Today, `YYYY-MM-DD` (UTC). */
  today: string;
  nearTargetDays: number;
  escalateAfterDays: number;
}

const CONDITION: Record<FindingCrossing, string> = {
  overdue: "a.overdue_notified_at IS NULL AND a.due_at < $2::date",
  escalated: "a.escalated_notified_at IS NULL AND a.due_at <= $2::date - $4::int",
  near_target:
    "a.near_target_notified_at IS NULL AND a.found_at + make_interval(days => o.fix_target_days - $3::int) <= to_timestamp($1 / 1000.0)",
};

const COLUMN: Record<FindingCrossing, string> = {
  overdue: "overdue_notified_at",
  escalated: "escalated_notified_at",
  near_target: "near_target_notified_at",
};

const args = (rules: CrossingRules) => [rules.nowMs, rules.today, rules.nearTargetDays, rules.escalateAfterDays];
/** Every condition gets all four parameters; this names their types for the ones a condition leaves out. */
const TYPED = "$1::float8 IS NOT NULL AND $2::date IS NOT NULL AND $3::int IS NOT NULL AND $4::int IS NOT NULL";

/** Assignments that crossed a threshold and were not told yet, organization by organization. */
export async function crossingCandidates(db: Queryable, crossing: FindingCrossing, rules: CrossingRules, limit: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT a.id FROM assignments a JOIN orgs o ON o.id = a.org_id
     WHERE ${TYPED} AND a.status <> 'done' AND ${CONDITION[crossing]} ORDER BY a.org_id, a.id LIMIT $5`,
    [...args(rules), limit],
  );
  return rows.map((r) => r.id);
}

/** Claims one crossing; false when another process (or a change meanwhile) got there first. */
export async function claimCrossing(tx: Queryable, crossing: FindingCrossing, id: number, rules: CrossingRules): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE assignments a SET ${COLUMN[crossing]} = to_timestamp($1 / 1000.0) FROM orgs o
     WHERE ${TYPED} AND o.id = a.org_id AND a.id = $5 AND a.status <> 'done' AND ${CONDITION[crossing]}`,
    [...args(rules), id],
  );
  return (rowCount ?? 0) > 0;
}

export type RiskCrossing = "expiring" | "expired";

export interface RiskRow {
  id: number;
  org_id: number;
  domain: string;
  finding_key: string;
  note: string;
  acked_at: Date;
  expires_at: Date;
}

const RISK_CONDITION: Record<RiskCrossing, string> = {
  expiring: "expiring_notified_at IS NULL AND expires_at - make_interval(days => $2::int) <= to_timestamp($1 / 1000.0)",
  expired: "expired_notified_at IS NULL AND expires_at <= to_timestamp($1 / 1000.0)",
};

export async function riskCandidates(
  db: Queryable,
  crossing: RiskCrossing,
  nowMs: number,
  expiringDays: number,
  limit: number,
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT id FROM acknowledgements WHERE $1::float8 IS NOT NULL AND $2::int IS NOT NULL AND released_at IS NULL AND expires_at IS NOT NULL AND ${RISK_CONDITION[crossing]}
     ORDER BY org_id, id LIMIT $3`,
    [nowMs, expiringDays, limit],
  );
  return rows.map((r) => r.id);
}

export async function claimRisk(
  tx: Queryable,
  crossing: RiskCrossing,
  id: number,
  nowMs: number,
  expiringDays: number,
): Promise<RiskRow | null> {
  const column = crossing === "expiring" ? "expiring_notified_at" : "expired_notified_at";
  const { rows } = await tx.query<RiskRow>(
    `UPDATE acknowledgements SET ${column} = to_timestamp($1 / 1000.0)
     WHERE $1::float8 IS NOT NULL AND $2::int IS NOT NULL AND id = $3 AND released_at IS NULL AND expires_at IS NOT NULL AND ${RISK_CONDITION[crossing]}
     RETURNING id, org_id, domain, finding_key, note, acked_at, expires_at`,
    [nowMs, expiringDays, id],
  );
  return rows[0] ?? null;
}
