import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

export interface DomainRow {
  id: number;
  org_id: number;
  name: string;
  verified: boolean;
  verification_token: string;
  verified_at: Date | null;
  verified_by: string | null;
  created_at: Date;
}

export const TXT_LABEL = "_gateway-verification";

export function txtRecord(domain: DomainRow): { name: string; value: string } {
  return { name: `${TXT_LABEL}.${domain.name}`, value: `gateway-verification=${domain.verification_token}` };
}

/** How many domains the organization has, verified or not (ORG_LIMITS). */
export async function countDomains(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM domains WHERE org_id = $1", [orgId]);
  return rows[0].n;
}

export async function insertDomain(
  db: Queryable,
  domain: { orgId: number; name: string; token: string; verified: boolean; nowMs: number },
): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `INSERT INTO domains (org_id, name, verified, verification_token, verified_at, verified_by, created_at)
     VALUES ($1, $2, $3, $4, CASE WHEN $3 THEN to_timestamp($5 / 1000.0) END, CASE WHEN $3 THEN 'operator' END,
             to_timestamp($5 / 1000.0))
     ON CONFLICT (org_id, name) DO NOTHING RETURNING *`,
    [domain.orgId, domain.name, domain.verified, domain.token, domain.nowMs],
  );
  return rows[0] ?? null;
}

export async function findDomain(db: Queryable, orgId: number, name: string): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>("SELECT * FROM domains WHERE org_id = $1 AND name = $2", [orgId, name]);
  return rows[0] ?? null;
}

export async function markVerified(db: Queryable, id: number, by: string, nowMs: number): Promise<DomainRow> {
  const { rows } = await db.query<DomainRow>(
    `UPDATE domains SET verified = true, verified_at = COALESCE(verified_at, to_timestamp($2 / 1000.0)), verified_by = $3
     WHERE id = $1 RETURNING *`,
    [id, nowMs, by],
  );
  return rows[0];
}

export async function verifiedDomains(db: Queryable, orgId: number): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>("SELECT name FROM domains WHERE org_id = $1 AND verified ORDER BY name", [orgId]);
  return rows.map((r) => r.name);
}

/** The organization holding `name` verified (the oldest such domain), or null. */
export async function orgOfVerifiedDomain(db: Queryable, name: string): Promise<number | null> {
  const { rows } = await db.query<{ org_id: number }>("SELECT org_id FROM domains WHERE name = $1 AND verified ORDER BY id LIMIT 1", [
    name,
  ]);
  return rows[0]?.org_id ?? null;
}

/** An organization's domains, verified or not, newest first. */
export async function listDomains(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<DomainRow>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM domains WHERE org_id = $1", [orgId]),
    db.query<DomainRow>("SELECT * FROM domains WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3", [
      orgId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}
