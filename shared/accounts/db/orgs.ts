import { CYCLE_MS, PLANS, cycleStart, type Plan } from "../plans.js";
import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

export interface OrgRow {
  id: number;
  name: string;
  plan: Plan;
  fix_target_days: number;
  subscription: "active" | "lapsed";
  /** The member new failing findings are assigned to (automatic assignment); null: none. */
  default_owner_id: number | null;
  cycle_anchor: Date;
  lapsed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  id: number;
  org_id: number;
  name: string;
  email: string;
  role: "owner" | "admin" | "member";
  created_at: Date;
}

export async function insertOrg(
  db: Queryable,
  org: { name: string; plan: Plan; fixTargetDays: number; subscription: "active" | "lapsed"; nowMs: number },
): Promise<OrgRow> {
  const { rows } = await db.query<OrgRow>(
    `INSERT INTO orgs (name, plan, fix_target_days, subscription, cycle_anchor, lapsed_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), CASE WHEN $4 = 'lapsed' THEN to_timestamp($5 / 1000.0) END,
             to_timestamp($5 / 1000.0), to_timestamp($5 / 1000.0))
     RETURNING *`,
    [org.name, org.plan, org.fixTargetDays, org.subscription, org.nowMs],
  );
  return rows[0];
}

export async function findOrg(db: Queryable, id: number): Promise<OrgRow | null> {
  const { rows } = await db.query<OrgRow>("SELECT * FROM orgs WHERE id = $1", [id]);
  return rows[0] ?? null;
}

export async function updateOrg(
  db: Queryable,
  id: number,
  change: { name?: string; plan?: Plan; fixTargetDays?: number; subscription?: "active" | "lapsed"; defaultOwnerId?: number | null },
  nowMs: number,
): Promise<OrgRow | null> {
  // A lapse is stamped once; renewal clears it and starts a fresh window from now.
  const { rows } = await db.query<OrgRow>(
    `UPDATE orgs SET
       name = COALESCE($2, name),
       plan = COALESCE($3, plan),
       fix_target_days = COALESCE($4, fix_target_days),
       lapsed_at = CASE
         WHEN $5::text = 'lapsed' AND subscription = 'active' THEN to_timestamp($6 / 1000.0)
         WHEN $5::text = 'active' THEN NULL ELSE lapsed_at END,
       cycle_anchor = CASE
         WHEN $5::text = 'active' AND subscription = 'lapsed' THEN to_timestamp($6 / 1000.0) ELSE cycle_anchor END,
       subscription = COALESCE($5, subscription),
       default_owner_id = CASE WHEN $7 THEN $8::bigint ELSE default_owner_id END,
       updated_at = to_timestamp($6 / 1000.0)
     WHERE id = $1 RETURNING *`,
    [
      id,
      change.name ?? null,
      change.plan ?? null,
      change.fixTargetDays ?? null,
      change.subscription ?? null,
      nowMs,
      change.defaultOwnerId !== undefined,
      change.defaultOwnerId ?? null,
    ],
  );
  return rows[0] ?? null;
}

export async function cycleUsed(db: Queryable, orgId: number, cycleStartMs: number): Promise<number> {
  const { rows } = await db.query<{ used: number }>(
    "SELECT used FROM cycle_usage WHERE org_id = $1 AND cycle_start = to_timestamp($2 / 1000.0)",
    [orgId, cycleStartMs],
  );
  return rows[0]?.used ?? 0;
}

export function orgCycle(org: OrgRow, nowMs: number): { startMs: number; resetsMs: number } {
  const startMs = cycleStart(org.cycle_anchor.getTime(), org.lapsed_at?.getTime() ?? nowMs);
  return { startMs, resetsMs: startMs + CYCLE_MS };
}

export function allowanceOf(plan: Plan): number | null {
  return PLANS[plan].calls;
}

/** How many members the organization has (ORG_LIMITS). */
export async function countMembers(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM members WHERE org_id = $1", [orgId]);
  return rows[0].n;
}

export async function insertMember(
  db: Queryable,
  member: { orgId: number; name: string; email: string; role: MemberRow["role"]; nowMs: number },
): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>(
    `INSERT INTO members (org_id, name, email, role, created_at) VALUES ($1, $2, lower($3), $4, to_timestamp($5 / 1000.0))
     ON CONFLICT (org_id, email) DO NOTHING RETURNING *`,
    [member.orgId, member.name, member.email, member.role, member.nowMs],
  );
  return rows[0] ?? null;
}

export async function findMemberByEmail(db: Queryable, orgId: number, email: string): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>("SELECT * FROM members WHERE org_id = $1 AND email = lower($2)", [orgId, email]);
  return rows[0] ?? null;
}

export async function findMember(db: Queryable, id: number): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>("SELECT * FROM members WHERE id = $1", [id]);
  return rows[0] ?? null;
}

/**
 * A member of the organization, its row locked for the rest of the transaction (a role
 * change or a removal); null when the organization has no such member.
 */
export async function lockMember(db: Queryable, orgId: number, id: number): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>("SELECT * FROM members WHERE id = $1 AND org_id = $2 FOR UPDATE", [id, orgId]);
  return rows[0] ?? null;
}

/** How many owners the organization has (counted under lockOrgCount(…, "owners"): a removal or demotion never leaves none). */
export async function countOwners(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM members WHERE org_id = $1 AND role = 'owner'", [orgId]);
  return rows[0].n;
}

export async function setMemberRole(db: Queryable, id: number, role: MemberRow["role"]): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>("UPDATE members SET role = $2 WHERE id = $1 RETURNING *", [id, role]);
  return rows[0] ?? null;
}

/**
 * Deletes a member. Its sessions, passkeys and links go with it (ON DELETE CASCADE,
 * migration 0010), so its cookies are refused from their next request; the organization's
 * `default_owner` naming it is cleared (ON DELETE SET NULL, 0008), as is the owner of any
 * assignment it still held (0001; the caller unassigns them first, to write their history).
 */
export async function deleteMember(db: Queryable, orgId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM members WHERE id = $1 AND org_id = $2", [id, orgId]);
  return (rowCount ?? 0) > 0;
}

/** Members by id (the default owners of a page of organizations), in one query. */
export async function membersByIds(db: Queryable, ids: readonly number[]): Promise<Map<number, MemberRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<MemberRow>("SELECT * FROM members WHERE id = ANY($1::bigint[])", [ids]);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * The organization's default owner for new failing findings, with its fix-time target:
 * null when the setting is unset (or its member was removed, which clears it).
 */
export async function defaultOwnerOf(db: Queryable, orgId: number): Promise<{ member: MemberRow; fixTargetDays: number } | null> {
  const { rows } = await db.query<MemberRow & { fix_target_days: number }>(
    "SELECT m.*, o.fix_target_days FROM orgs o JOIN members m ON m.id = o.default_owner_id AND m.org_id = o.id WHERE o.id = $1",
    [orgId],
  );
  if (!rows[0]) return null;
  const { fix_target_days: fixTargetDays, ...member } = rows[0];
  return { member, fixTargetDays };
}

/** Locks the orgs table against writers for the rest of the transaction and counts its rows (seeding once). */
export async function lockAndCountOrgs(tx: Queryable): Promise<number> {
  await tx.query("LOCK TABLE orgs IN EXCLUSIVE MODE");
  const { rows } = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM orgs");
  return rows[0].n;
}

/** Every organization's id, in order (a full rebuild of the snapshots). */
export async function allOrgIds(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>("SELECT id FROM orgs ORDER BY id");
  return rows.map((r) => r.id);
}

/**
 * A lock on (organization, what is counted) for the rest of the transaction: creates of one
 * kind in one organization queue behind it. An advisory lock, not the organization's row: a
 * row lock (FOR UPDATE) would also hold up every insert that references the organization (its
 * foreign key takes a share lock on the row), and deadlock with a transaction that took another
 * row (a domain's) before such an insert.
 */
export async function lockOrgCount(db: Queryable, orgId: number, what: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, $2))", [`limit:${what}`, orgId]);
}

/** An organization's row, locked for the rest of the transaction. */
export async function lockOrg(db: Queryable, orgId: number): Promise<OrgRow | null> {
  const { rows } = await db.query<OrgRow>("SELECT * FROM orgs WHERE id = $1 FOR UPDATE", [orgId]);
  return rows[0] ?? null;
}

/**
 * An organization's row, locked against changes of its settings (PATCH /orgs/:org takes it
 * FOR UPDATE) but not against inserts that reference it (FOR NO KEY UPDATE: their foreign
 * key's share lock does not conflict). Taken before a member's row by a removal, as the
 * settings change does (it locks the organization, then names a member as default owner):
 * the other order could deadlock the two.
 */
export async function lockOrgSettings(db: Queryable, orgId: number): Promise<OrgRow | null> {
  const { rows } = await db.query<OrgRow>("SELECT * FROM orgs WHERE id = $1 FOR NO KEY UPDATE", [orgId]);
  return rows[0] ?? null;
}

/** Organizations, newest first (GET /orgs). */
export async function listOrgs(db: Queryable, page: PageRange): Promise<ListPage<OrgRow>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM orgs"),
    db.query<OrgRow>("SELECT * FROM orgs ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2", [page.limit, page.offset]),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}

/** An organization's members, newest first. */
export async function listMembers(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<MemberRow>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM members WHERE org_id = $1", [orgId]),
    db.query<MemberRow>("SELECT * FROM members WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3", [
      orgId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}
