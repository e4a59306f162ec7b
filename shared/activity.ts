import type { Queryable } from "./db/pool.js";

/**
 * The team activity record (interface.md 2.8). Groups are the activity.php filter values.
 * There is no address column and this function takes none: IP addresses never enter it.
 */
export const ACTIVITY_GROUPS = [
  "risks", "ownership", "monitoring", "settings", "trust", "siem", "evidence", "members", "team_security",
] as const;

export type ActivityGroup = (typeof ACTIVITY_GROUPS)[number];

export interface ActivityEntry {
  orgId: number;
  atMs: number;
  who: string;
  via: "api" | "admin" | "system";
  group: ActivityGroup;
  action: string;
  actionCode: string;
  domain?: string | null;
  detail?: Record<string, unknown>;
}

export async function recordActivity(db: Queryable, entry: ActivityEntry): Promise<void> {
  await db.query(
    `INSERT INTO activity (org_id, at, who, via, grp, action, action_code, domain, detail)
     VALUES ($1, to_timestamp($2 / 1000.0), $3, $4, $5, $6, $7, $8, $9)`,
    [entry.orgId, entry.atMs, entry.who, entry.via, entry.group, entry.action, entry.actionCode, entry.domain ?? null,
      JSON.stringify(entry.detail ?? {})],
  );
}
