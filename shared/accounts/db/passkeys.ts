import type { MemberRow } from "./orgs.js";
import type { Queryable } from "../../platform/db/pool.js";

export interface PasskeyRow {
  id: number;
  member_id: number;
  credential_id: string;
  public_key: Buffer;
  counter: number;
  transports: string[];
  device_type: string;
  backed_up: boolean;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export async function insertPasskey(
  db: Queryable,
  passkey: {
    memberId: number;
    credentialId: string;
    publicKey: Uint8Array;
    counter: number;
    transports: string[];
    deviceType: string;
    backedUp: boolean;
    name: string;
    nowMs: number;
  },
): Promise<PasskeyRow | null> {
  const { rows } = await db.query<PasskeyRow>(
    `INSERT INTO member_passkeys (member_id, credential_id, public_key, counter, transports, device_type, backed_up, name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0))
     ON CONFLICT (credential_id) DO NOTHING RETURNING *`,
    [
      passkey.memberId,
      passkey.credentialId,
      Buffer.from(passkey.publicKey),
      passkey.counter,
      passkey.transports,
      passkey.deviceType,
      passkey.backedUp,
      passkey.name,
      passkey.nowMs,
    ],
  );
  return rows[0] ?? null;
}

export async function findPasskeyByCredential(db: Queryable, credentialId: string): Promise<PasskeyRow | null> {
  const { rows } = await db.query<PasskeyRow>("SELECT * FROM member_passkeys WHERE credential_id = $1", [credentialId]);
  return rows[0] ?? null;
}

/** A passkey with its member and the member's organization name (all a sign-in needs, in one query). */
export async function findPasskeyWithMember(
  db: Queryable,
  credentialId: string,
): Promise<{ passkey: PasskeyRow; member: MemberRow; orgName: string } | null> {
  const { rows } = await db.query<
    PasskeyRow & { org_id: number; m_name: string; email: string; role: MemberRow["role"]; m_created_at: Date; org_name: string }
  >(
    `SELECT p.*, m.org_id, m.name AS m_name, m.email, m.role, m.created_at AS m_created_at, o.name AS org_name
     FROM member_passkeys p JOIN members m ON m.id = p.member_id JOIN orgs o ON o.id = m.org_id
     WHERE p.credential_id = $1`,
    [credentialId],
  );
  const row = rows[0];
  if (!row) return null;
  const { org_id, m_name, email, role, m_created_at, org_name, ...passkey } = row;
  return { passkey, member: { id: passkey.member_id, org_id, name: m_name, email, role, created_at: m_created_at }, orgName: org_name };
}

export async function listPasskeys(db: Queryable, memberId: number): Promise<PasskeyRow[]> {
  const { rows } = await db.query<PasskeyRow>("SELECT * FROM member_passkeys WHERE member_id = $1 ORDER BY id", [memberId]);
  return rows;
}

export async function countPasskeys(db: Queryable, memberId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM member_passkeys WHERE member_id = $1", [memberId]);
  return rows[0].n;
}

/**
 * Records a verified use. The counter only moves forward: the UPDATE matches only while the
 * stored counter is below the new one (or both are 0, an authenticator without a counter),
 * so two concurrent uses of one signature cannot both pass. False: the use is refused.
 */
export async function recordPasskeyUse(db: Queryable, id: number, newCounter: number, nowMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE member_passkeys SET counter = $2, last_used_at = to_timestamp($3 / 1000.0)
     WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))`,
    [id, newCounter, nowMs],
  );
  return rowCount === 1;
}

/**
 * Removes one of the member's passkeys unless it is the last one (the member keeps a way to
 * sign in without e-mail). Locks the member's passkeys so two removals cannot both leave none.
 */
export async function removePasskey(db: Queryable, memberId: number, id: number): Promise<PasskeyRow | "last" | null> {
  const { rows } = await db.query<{ id: number }>("SELECT id FROM member_passkeys WHERE member_id = $1 ORDER BY id FOR UPDATE", [memberId]);
  if (!rows.some((r) => r.id === id)) return null;
  if (rows.length === 1) return "last";
  const removed = await db.query<PasskeyRow>("DELETE FROM member_passkeys WHERE member_id = $1 AND id = $2 RETURNING *", [memberId, id]);
  return removed.rows[0] ?? null;
}
