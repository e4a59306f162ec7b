import type { MemberRow } from "./orgs.js";
import type { Queryable } from "../../platform/db/pool.js";

export type SigninMethod = "passkey" | "link" | "invitation";

export interface SessionRow {
  id: number;
  member_id: number;
  method: SigninMethod;
  passkey_id: number | null;
  user_agent: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** A session with its member and the member's organization name (one query per request). */
export interface SessionWithMember {
  session: SessionRow;
  member: MemberRow;
  orgName: string;
}

const SESSION_COLUMNS = "s.id, s.member_id, s.method, s.passkey_id, s.user_agent, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at";

export async function insertSession(
  db: Queryable,
  session: {
    memberId: number;
    tokenHash: Buffer;
    method: SigninMethod;
    passkeyId: number | null;
    userAgent: string;
    nowMs: number;
    absoluteMs: number;
    idleMs: number;
  },
): Promise<SessionRow> {
  // The member's sessions dead for a day or more are dropped on the way (revoked, past
  // their end, or idle past the idle lifetime): the table holds what its list can show.
  await db.query(
    `DELETE FROM member_sessions WHERE member_id = $1 AND (
       expires_at < to_timestamp($2 / 1000.0) - interval '1 day'
       OR revoked_at < to_timestamp($2 / 1000.0) - interval '1 day'
       OR last_seen_at < to_timestamp(($2::bigint - $3::bigint) / 1000.0) - interval '1 day')`,
    [session.memberId, session.nowMs, session.idleMs],
  );
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO member_sessions AS s (member_id, token_hash, method, passkey_id, user_agent, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), to_timestamp($6 / 1000.0), to_timestamp(($6::bigint + $7::bigint) / 1000.0))
     RETURNING ${SESSION_COLUMNS}`,
    [session.memberId, session.tokenHash, session.method, session.passkeyId, session.userAgent, session.nowMs, session.absoluteMs],
  );
  return rows[0];
}

interface SessionJoinRow extends SessionRow {
  org_id: number;
  name: string;
  email: string;
  role: MemberRow["role"];
  member_created_at: Date;
  org_name: string;
}

/** The session of a cookie, whatever its state (the caller judges revocation and lifetimes on the clock). */
export async function findSessionByToken(db: Queryable, tokenHash: Buffer): Promise<SessionWithMember | null> {
  const { rows } = await db.query<SessionJoinRow>(
    `SELECT ${SESSION_COLUMNS}, m.org_id, m.name, m.email, m.role, m.created_at AS member_created_at, o.name AS org_name
     FROM member_sessions s JOIN members m ON m.id = s.member_id JOIN orgs o ON o.id = m.org_id
     WHERE s.token_hash = $1`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row) return null;
  const { org_id, name, email, role, member_created_at, org_name, ...session } = row;
  return {
    session,
    member: { id: session.member_id, org_id, name, email, role, created_at: member_created_at },
    orgName: org_name,
  };
}

/** Moves last_seen_at to now when it is older than `touchMs` (one write a minute per session, not one per request). */
export async function touchSession(db: Queryable, id: number, nowMs: number, touchMs: number): Promise<void> {
  await db.query(
    `UPDATE member_sessions SET last_seen_at = to_timestamp($2 / 1000.0)
     WHERE id = $1 AND revoked_at IS NULL AND last_seen_at < to_timestamp(($2::bigint - $3::bigint) / 1000.0)`,
    [id, nowMs, touchMs],
  );
}

/** The member's live sessions at `nowMs`, newest first. */
export async function listLiveSessions(db: Queryable, memberId: number, nowMs: number, idleMs: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM member_sessions s
     WHERE s.member_id = $1 AND s.revoked_at IS NULL AND s.expires_at > to_timestamp($2 / 1000.0)
       AND s.last_seen_at > to_timestamp(($2::bigint - $3::bigint) / 1000.0)
     ORDER BY s.created_at DESC, s.id DESC`,
    [memberId, nowMs, idleMs],
  );
  return rows;
}

/** Revokes one of the member's sessions; null when it is not the member's or already revoked. */
export async function revokeSession(db: Queryable, memberId: number, id: number, nowMs: number): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>(
    `UPDATE member_sessions AS s SET revoked_at = to_timestamp($3 / 1000.0)
     WHERE s.member_id = $1 AND s.id = $2 AND s.revoked_at IS NULL RETURNING ${SESSION_COLUMNS}`,
    [memberId, id, nowMs],
  );
  return rows[0] ?? null;
}
