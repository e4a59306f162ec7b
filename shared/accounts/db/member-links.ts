import type { MemberRow } from "./orgs.js";
import type { Queryable } from "../../platform/db/pool.js";

export type LinkPurpose = "invitation" | "signin";

export interface LinkRow {
  id: number;
  member_id: number;
  purpose: LinkPurpose;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A link with the member it signs in and that member's organization name. */
export interface LinkWithMember {
  link: LinkRow;
  member: MemberRow;
  orgName: string;
}

export async function insertLink(
  db: Queryable,
  link: { memberId: number; purpose: LinkPurpose; tokenHash: Buffer; nowMs: number; lifetimeMs: number },
): Promise<LinkRow> {
  // Links of this member dead for a day or more are dropped on the way: the table keeps
  // only what can still be used or was used recently.
  await db.query("DELETE FROM member_links WHERE member_id = $1 AND expires_at < to_timestamp($2 / 1000.0) - interval '1 day'", [
    link.memberId,
    link.nowMs,
  ]);
  const { rows } = await db.query<LinkRow>(
    `INSERT INTO member_links (member_id, purpose, token_hash, created_at, expires_at)
     VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp(($4::bigint + $5::bigint) / 1000.0))
     RETURNING id, member_id, purpose, created_at, expires_at, used_at`,
    [link.memberId, link.purpose, link.tokenHash, link.nowMs, link.lifetimeMs],
  );
  return rows[0];
}

const LINK_WITH_MEMBER = `
  SELECT l.id, l.member_id, l.purpose, l.created_at, l.expires_at, l.used_at,
         m.id AS m_id, m.org_id, m.name, m.email, m.role, m.created_at AS m_created_at, o.name AS org_name
  FROM member_links l JOIN members m ON m.id = l.member_id JOIN orgs o ON o.id = m.org_id`;

interface LinkJoinRow extends LinkRow {
  m_id: number;
  org_id: number;
  name: string;
  email: string;
  role: MemberRow["role"];
  m_created_at: Date;
  org_name: string;
}

function split(row: LinkJoinRow): LinkWithMember {
  return {
    link: {
      id: row.id,
      member_id: row.member_id,
      purpose: row.purpose,
      created_at: row.created_at,
      expires_at: row.expires_at,
      used_at: row.used_at,
    },
    member: { id: row.m_id, org_id: row.org_id, name: row.name, email: row.email, role: row.role, created_at: row.m_created_at },
    orgName: row.org_name,
  };
}

/** A link still usable at `nowMs`: of this purpose, unused and unexpired. */
export async function findUsableLink(
  db: Queryable,
  tokenHash: Buffer,
  purpose: LinkPurpose,
  nowMs: number,
): Promise<LinkWithMember | null> {
  const { rows } = await db.query<LinkJoinRow>(
    `${LINK_WITH_MEMBER} WHERE l.token_hash = $1 AND l.purpose = $2 AND l.used_at IS NULL AND l.expires_at > to_timestamp($3 / 1000.0)`,
    [tokenHash, purpose, nowMs],
  );
  return rows[0] ? split(rows[0]) : null;
}

/**
 * Spends a link: true for the one caller that found it usable, false for every other
 * (used, expired, unknown, or spent by a concurrent replay a moment before).
 */
export async function spendLink(db: Queryable, tokenHash: Buffer, purpose: LinkPurpose, nowMs: number): Promise<LinkWithMember | null> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE member_links SET used_at = to_timestamp($3 / 1000.0)
     WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > to_timestamp($3 / 1000.0) RETURNING id`,
    [tokenHash, purpose, nowMs],
  );
  if (!rows[0]) return null;
  const found = await db.query<LinkJoinRow>(`${LINK_WITH_MEMBER} WHERE l.id = $1`, [rows[0].id]);
  return found.rows[0] ? split(found.rows[0]) : null;
}

/** Every membership of one e-mail address, with its organization's name, accepted or not (the demo's owner). */
export async function membershipsOf(db: Queryable, email: string): Promise<(MemberRow & { org_name: string })[]> {
  const { rows } = await db.query<MemberRow & { org_name: string }>(
    "SELECT m.*, o.name AS org_name FROM members m JOIN orgs o ON o.id = m.org_id WHERE m.email = lower($1) ORDER BY m.id",
    [email],
  );
  return rows;
}

/**
 * Every accepted membership of one e-mail address, with its organization's name: a sign-in
 * link per membership. A membership counts once it was accepted: the member registered a
 * passkey (the invitation's page makes the first one) or spent its invitation. One nobody
 * accepted was made by whoever added the address, who may be a stranger with an organization
 * named like the member's own: it gets no sign-in link, and its invitation stays its way in.
 */
export async function acceptedMembershipsOf(db: Queryable, email: string): Promise<(MemberRow & { org_name: string })[]> {
  const { rows } = await db.query<MemberRow & { org_name: string }>(
    `SELECT m.*, o.name AS org_name FROM members m JOIN orgs o ON o.id = m.org_id
     WHERE m.email = lower($1)
       AND (EXISTS (SELECT 1 FROM member_passkeys p WHERE p.member_id = m.id)
            OR EXISTS (SELECT 1 FROM member_links l WHERE l.member_id = m.id AND l.purpose = 'invitation' AND l.used_at IS NOT NULL))
     ORDER BY m.id`,
    [email],
  );
  return rows;
}
