import type { Queryable } from "../../platform/db/pool.js";

/**
 * Which organization owns a resource named by id in an admin path: what the route table's
 * authorization check compares with the caller's organization (ingress/admin/reach.ts).
 * Null when there is no such resource. One query each, by primary key.
 */
export const OWNED_KINDS = ["key", "siem", "webhook", "token", "member"] as const;
export type OwnedKind = (typeof OWNED_KINDS)[number];

const OWNER_QUERIES: Record<OwnedKind, string> = {
  key: "SELECT org_id FROM api_keys WHERE id = $1",
  siem: "SELECT org_id FROM siem_destinations WHERE id = $1",
  webhook: "SELECT org_id FROM webhooks WHERE id = $1",
  token: "SELECT org_id FROM org_tokens WHERE id = $1",
  member: "SELECT org_id FROM members WHERE id = $1",
};

export async function ownerOf(db: Queryable, kind: OwnedKind, id: number): Promise<number | null> {
  const { rows } = await db.query<{ org_id: number }>(OWNER_QUERIES[kind], [id]);
  return rows[0]?.org_id ?? null;
}
