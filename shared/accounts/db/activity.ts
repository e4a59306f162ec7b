import type { ActivityEntry } from "../activity.js";
import type { Queryable } from "../../platform/db/pool.js";

/** One activity entry as stored (shared/accounts/activity.ts writes them). There is no address column. */
export interface ActivityRow {
  id: number;
  at: Date;
  who: string;
  via: string;
  grp: string;
  action: string;
  action_code: string;
  domain: string | null;
  detail: Record<string, unknown>;
}

export interface ActivityFilter {
  /** Inclusive UTC dates `YYYY-MM-DD`. */
  from?: string;
  to?: string;
  group?: string;
  domain?: string;
  limit: number;
  offset: number;
}

/** Newest first, with the number of entries matching the filter. */
export async function listActivity(db: Queryable, orgId: number, filter: ActivityFilter): Promise<{ total: number; rows: ActivityRow[] }> {
  const where = `org_id = $1
    AND ($2::date IS NULL OR at >= $2::date::timestamp AT TIME ZONE 'UTC')
    AND ($3::date IS NULL OR at < ($3::date + 1)::timestamp AT TIME ZONE 'UTC')
    AND ($4::text IS NULL OR grp = $4)
    AND ($5::text IS NULL OR domain = $5)`;
  const args = [orgId, filter.from ?? null, filter.to ?? null, filter.group ?? null, filter.domain ?? null];
  const [count, page] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM activity WHERE ${where}`, args),
    db.query<ActivityRow>(
      `SELECT id, at, who, via, grp, action, action_code, domain, detail FROM activity WHERE ${where}
       ORDER BY at DESC, id DESC LIMIT $6 OFFSET $7`,
      [...args, filter.limit, filter.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: page.rows };
}

export async function recordActivity(db: Queryable, entry: ActivityEntry): Promise<void> {
  await db.query(
    `INSERT INTO activity (org_id, at, who, via, grp, action, action_code, domain, detail)
     VALUES ($1, to_timestamp($2 / 1000.0), $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.orgId,
      entry.atMs,
      entry.who,
      entry.via,
      entry.group,
      entry.action,
      entry.actionCode,
      entry.domain ?? null,
      JSON.stringify(entry.detail ?? {}),
    ],
  );
}
