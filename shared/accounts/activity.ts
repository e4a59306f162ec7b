/**
 * The team activity record (interface.md 2.8). Groups are the activity.php filter values.
 * There is no address column and this function takes none: IP addresses never enter it.
 */
export const ACTIVITY_GROUPS = [
  "risks",
  "ownership",
  "monitoring",
  "settings",
  "trust",
  "siem",
  "evidence",
  "members",
  "team_security",
] as const;

export type ActivityGroup = (typeof ACTIVITY_GROUPS)[number];

export interface ActivityEntry {
  /** Null for deployment-wide changes (the status page), which belong to no organization. */
  orgId: number | null;
  atMs: number;
  who: string;
  via: "api" | "admin" | "system";
  group: ActivityGroup;
  action: string;
  actionCode: string;
  domain?: string | null;
  detail?: Record<string, unknown>;
}

/** Where the entry is written: shared/accounts/db/activity.ts (every query lives in a room's db/ folder). */
export { recordActivity } from "./db/activity.js";
