import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";
import type { UsageRow } from "./usage.js";

/**
 * An organization's usage and installations over all its keys: the organization-wide reads
 * of the tables the usage actor writes (usage_daily and installations, through usage.ts;
 * one key's reads are in usage.ts and keys.ts).
 */

/**
 * The organization's usage_daily rows between two days (inclusive), summed over its keys
 * (revoked ones included: their calls were made) by day, endpoint label and reason, in order.
 */
export async function dailyUsageOfOrg(db: Queryable, orgId: number, from: string, to: string): Promise<UsageRow[]> {
  const { rows } = await db.query<UsageRow>(
    `SELECT day, endpoint, reason, sum(counted)::bigint AS counted, sum(refused)::bigint AS refused, sum(calls)::bigint AS calls
     FROM usage_daily WHERE org_id = $1 AND day BETWEEN $2 AND $3
     GROUP BY day, endpoint, reason ORDER BY day, endpoint, reason`,
    [orgId, from, to],
  );
  return rows;
}

export const INSTALLATION_STATUSES = ["approved", "pending", "blocked"] as const;
export type InstallationStatus = (typeof INSTALLATION_STATUSES)[number];

/** An installation with the key it was seen on. */
export interface OrgInstallationRow {
  key_id: number;
  key_name: string;
  install: string;
  status: InstallationStatus;
  first_seen_at: Date;
  last_seen_at: Date;
}

/**
 * The installations of the organization's keys that are not revoked, most recently seen
 * first (then by key and name, so pages do not overlap), optionally of one status.
 */
export async function listInstallationsOfOrg(
  db: Queryable,
  orgId: number,
  filter: PageRange & { status?: InstallationStatus },
): Promise<ListPage<OrgInstallationRow>> {
  const where = "k.org_id = $1 AND k.status <> 'revoked' AND ($2::text IS NULL OR i.status = $2)";
  const args = [orgId, filter.status ?? null];
  const [count, found] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM installations i JOIN api_keys k ON k.id = i.key_id WHERE ${where}`, args),
    db.query<OrgInstallationRow>(
      `SELECT i.key_id, k.name AS key_name, i.install, i.status, i.first_seen_at, i.last_seen_at
       FROM installations i JOIN api_keys k ON k.id = i.key_id WHERE ${where}
       ORDER BY i.last_seen_at DESC, i.key_id DESC, i.install DESC LIMIT $3 OFFSET $4`,
      [...args, filter.limit, filter.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}
