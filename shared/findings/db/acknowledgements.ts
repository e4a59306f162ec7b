import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";
import type { AckRow } from "../../scans/index.js";

/**
 * Risk acceptances (acknowledgements): at most one current per (organization, domain,
 * finding), enforced by an index. Accepting releases the current one first; both run
 * in the caller's transaction after lockDomainRow, so two acceptances of one finding
 * queue instead of colliding on the index.
 */

/** Takes the domain row's lock for the rest of the transaction. */
export async function lockDomainRow(tx: Queryable, domainId: number): Promise<void> {
  await tx.query("SELECT 1 FROM domains WHERE id = $1 FOR UPDATE", [domainId]);
}

/** Releases the current acceptance of a finding, if any; returns it. */
export async function releaseAcceptance(
  tx: Queryable,
  orgId: number,
  domain: string,
  findingKey: string,
  nowMs: number,
): Promise<AckRow | null> {
  const { rows } = await tx.query<AckRow>(
    `UPDATE acknowledgements SET released_at = to_timestamp($4 / 1000.0)
     WHERE org_id = $1 AND domain = $2 AND finding_key = $3 AND released_at IS NULL RETURNING *`,
    [orgId, domain, findingKey, nowMs],
  );
  return rows[0] ?? null;
}

export interface NewAcceptance {
  orgId: number;
  domain: string;
  findingKey: string;
  note: string;
  by: string;
  nowMs: number;
  expiresMs: number | null;
}

export async function insertAcceptance(tx: Queryable, a: NewAcceptance): Promise<AckRow> {
  const { rows } = await tx.query<AckRow>(
    `INSERT INTO acknowledgements (org_id, domain, finding_key, note, acked_by, acked_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), CASE WHEN $7::float8 IS NULL THEN NULL ELSE to_timestamp($7 / 1000.0) END)
     RETURNING *`,
    [a.orgId, a.domain, a.findingKey, a.note, a.by, a.nowMs, a.expiresMs],
  );
  return rows[0];
}

/**
 * The findings among `findingKeys` whose risk the organization accepted and has not
 * released (an acceptance past its expiry still stands until released: risk.expired asks
 * for a review, it does not release it).
 */
export async function acceptedFindings(db: Queryable, orgId: number, domain: string, findingKeys: readonly string[]): Promise<Set<string>> {
  if (findingKeys.length === 0) return new Set();
  const { rows } = await db.query<{ finding_key: string }>(
    "SELECT finding_key FROM acknowledgements WHERE org_id = $1 AND domain = $2 AND finding_key = ANY($3::text[]) AND released_at IS NULL",
    [orgId, domain, findingKeys],
  );
  return new Set(rows.map((r) => r.finding_key));
}

/** How many acceptances of the organization are in force, not counting the one of (domain, findingKey) a new one replaces (ORG_LIMITS). */
export async function countAcceptances(db: Queryable, orgId: number, domain: string, findingKey: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM acknowledgements WHERE org_id = $1 AND released_at IS NULL AND NOT (domain = $2 AND finding_key = $3)",
    [orgId, domain, findingKey],
  );
  return rows[0].n;
}

/** The organization's current (unreleased) acceptances, expired ones included, newest first. */
export async function listAcceptances(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<AckRow>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM acknowledgements WHERE org_id = $1 AND released_at IS NULL", [orgId]),
    db.query<AckRow>(
      `SELECT * FROM acknowledgements WHERE org_id = $1 AND released_at IS NULL
       ORDER BY acked_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}
