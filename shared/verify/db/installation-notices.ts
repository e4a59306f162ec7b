import type { Queryable } from "../../platform/db/pool.js";

/**
 * The pending-installation notices (migration 0011, docs/events.md "installation.pending"):
 * one row per installation the owner was told about.
 */

export interface PendingInstallation {
  keyId: number;
  install: string;
  atMs: number;
}

export interface ClaimedNotice {
  key_id: number;
  install: string;
  org_id: number;
  key_name: string;
  key_prefix: string;
  domain: string | null;
}

/**
 * Claims the notice of each installation still `pending` in PostgreSQL and not told yet;
 * returns those claimed now, with their key, in organization order (the order events of
 * several organizations are written in: shared/events/db/events.ts). An installation the owner
 * decided on before this runs is not announced (nor ever later: it is no longer pending).
 * A concurrent claim of the same one waits on the primary key, then claims nothing.
 */
export async function claimPendingNotices(tx: Queryable, rows: readonly PendingInstallation[]): Promise<ClaimedNotice[]> {
  if (rows.length === 0) return [];
  const { rows: claimed } = await tx.query<ClaimedNotice>(
    `WITH claimed AS (
       INSERT INTO installation_notices (key_id, install, noted_at)
       SELECT t.k, t.i, to_timestamp(t.a / 1000.0)
       FROM unnest($1::bigint[], $2::text[], $3::numeric[]) AS t(k, i, a)
       JOIN installations n ON n.key_id = t.k AND n.install = t.i AND n.status = 'pending'
       ORDER BY t.k, t.i
       ON CONFLICT (key_id, install) DO NOTHING
       RETURNING key_id, install
     )
     SELECT c.key_id, c.install, k.org_id, k.name AS key_name, k.prefix AS key_prefix, k.domain
     FROM claimed c JOIN api_keys k ON k.id = c.key_id
     ORDER BY k.org_id, c.key_id, c.install`,
    [rows.map((r) => r.keyId), rows.map((r) => r.install), rows.map((r) => r.atMs)],
  );
  return claimed;
}

/** The members told by e-mail when an installation waits: the organization's owners and admins. */
export async function ownersAndAdmins(db: Queryable, orgId: number): Promise<{ name: string; email: string }[]> {
  const { rows } = await db.query<{ name: string; email: string }>(
    "SELECT name, email FROM members WHERE org_id = $1 AND role IN ('owner', 'admin') ORDER BY id",
    [orgId],
  );
  return rows;
}
