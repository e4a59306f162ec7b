import type { Scope } from "../principal.js";
import type { Queryable } from "../../platform/db/pool.js";

/** Organization tokens (docs/accounts.md): only the SHA-256 of a token is stored. */

export interface TokenRow {
  id: number;
  org_id: number;
  name: string;
  token_hash: Buffer;
  prefix: string;
  scopes: Scope[];
  created_by: string;
  /** The member who made it (null: the operator, or made before this was recorded). */
  created_by_member: number | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  revoked_by: string | null;
}

/** A token row with its organization's name, as the principal needs it. */
export interface TokenWithOrg extends TokenRow {
  org_name: string;
}

export async function insertToken(
  db: Queryable,
  token: {
    orgId: number;
    name: string;
    hash: Buffer;
    prefix: string;
    scopes: readonly Scope[];
    createdBy: string;
    /** The member making it, when a member does (its removal revokes the token). */
    createdByMember: number | null;
    nowMs: number;
    expiresMs: number | null;
  },
): Promise<TokenRow> {
  const { rows } = await db.query<TokenRow>(
    `INSERT INTO org_tokens (org_id, name, token_hash, prefix, scopes, created_by, created_by_member, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8 / 1000.0), CASE WHEN $9::float8 IS NULL THEN NULL ELSE to_timestamp($9 / 1000.0) END)
     RETURNING *`,
    [token.orgId, token.name, token.hash, token.prefix, token.scopes, token.createdBy, token.createdByMember, token.nowMs, token.expiresMs],
  );
  return rows[0];
}

/** The token with this hash, revoked or not (the caller judges revocation and expiry). */
export async function tokenByHash(db: Queryable, hash: Buffer): Promise<TokenWithOrg | null> {
  const { rows } = await db.query<TokenWithOrg>(
    "SELECT t.*, o.name AS org_name FROM org_tokens t JOIN orgs o ON o.id = t.org_id WHERE t.token_hash = $1",
    [hash],
  );
  return rows[0] ?? null;
}

/**
 * Stamps last_used_at unless it was stamped in the minute before `nowMs`: at most one
 * write per token and minute, however many calls it makes.
 */
export async function touchToken(db: Queryable, id: number, nowMs: number): Promise<void> {
  await db.query(
    `UPDATE org_tokens SET last_used_at = to_timestamp($2 / 1000.0)
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= to_timestamp($2 / 1000.0) - interval '1 minute')`,
    [id, nowMs],
  );
}

/** How many tokens of the organization are live at `nowMs` (ORG_LIMITS). */
export async function countLiveTokens(db: Queryable, orgId: number, nowMs: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM org_tokens WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > to_timestamp($2 / 1000.0))",
    [orgId, nowMs],
  );
  return rows[0].n;
}

/** Live tokens (neither revoked nor expired at `nowMs`), newest first, with their number. */
export async function liveTokens(
  db: Queryable,
  orgId: number,
  nowMs: number,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: TokenRow[] }> {
  const where = "org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > to_timestamp($2 / 1000.0))";
  const [count, found] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM org_tokens WHERE ${where}`, [orgId, nowMs]),
    db.query<TokenRow>(`SELECT * FROM org_tokens WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, [
      orgId,
      nowMs,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}

/** Revokes a live token of the organization; null when there is none with that id. */
export async function revokeToken(db: Queryable, orgId: number, id: number, by: string, nowMs: number): Promise<TokenRow | null> {
  const { rows } = await db.query<TokenRow>(
    `UPDATE org_tokens SET revoked_at = to_timestamp($3 / 1000.0), revoked_by = $4
     WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING *`,
    [orgId, id, nowMs, by],
  );
  return rows[0] ?? null;
}

/** Revokes the live tokens `memberId` made (the member is being removed); returns them. */
export async function revokeMemberTokens(db: Queryable, orgId: number, memberId: number, by: string, nowMs: number): Promise<TokenRow[]> {
  const { rows } = await db.query<TokenRow>(
    `UPDATE org_tokens SET revoked_at = to_timestamp($3 / 1000.0), revoked_by = $4
     WHERE org_id = $1 AND created_by_member = $2 AND revoked_at IS NULL RETURNING *`,
    [orgId, memberId, nowMs, by],
  );
  return rows.sort((a, b) => a.id - b.id);
}
