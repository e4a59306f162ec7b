import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

export const CONTENT_TYPES = ["text", "html", "json", "number", "boolean"] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export interface ContentRow {
  org_id: number;
  content_key: string;
  type: ContentType;
  value: unknown;
  updated_at: Date;
}

/** How many content items the organization has, and whether `contentKey` is one of them (a replacement takes no new place). */
export async function countContent(db: Queryable, orgId: number, contentKey: string): Promise<{ n: number; exists: boolean }> {
  const { rows } = await db.query<{ n: number; exists: boolean }>(
    "SELECT count(*)::int AS n, coalesce(bool_or(content_key = $2), false) AS exists FROM content WHERE org_id = $1",
    [orgId, contentKey],
  );
  return rows[0];
}

/** How many secrets the organization has, and whether `name` is one of them. */
export async function countSecrets(db: Queryable, orgId: number, name: string): Promise<{ n: number; exists: boolean }> {
  const { rows } = await db.query<{ n: number; exists: boolean }>(
    "SELECT count(*)::int AS n, coalesce(bool_or(name = $2), false) AS exists FROM secrets WHERE org_id = $1",
    [orgId, name],
  );
  return rows[0];
}

export async function upsertContent(
  db: Queryable,
  row: { orgId: number; contentKey: string; type: ContentType; value: unknown; nowMs: number },
): Promise<ContentRow> {
  const { rows } = await db.query<ContentRow>(
    `INSERT INTO content (org_id, content_key, type, value, updated_at) VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0))
     ON CONFLICT (org_id, content_key) DO UPDATE SET type = EXCLUDED.type, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [row.orgId, row.contentKey, row.type, JSON.stringify(row.value), row.nowMs],
  );
  return rows[0];
}

export async function deleteContent(db: Queryable, orgId: number, contentKey: string): Promise<boolean> {
  const result = await db.query("DELETE FROM content WHERE org_id = $1 AND content_key = $2", [orgId, contentKey]);
  return (result.rowCount ?? 0) > 0;
}

export async function contentOf(db: Queryable, orgId: number): Promise<ContentRow[]> {
  const { rows } = await db.query<ContentRow>("SELECT * FROM content WHERE org_id = $1 ORDER BY content_key", [orgId]);
  return rows;
}

export interface SecretRow {
  org_id: number;
  name: string;
  sealed: Buffer;
  updated_at: Date;
}

export async function upsertSecret(db: Queryable, row: { orgId: number; name: string; sealed: Buffer; nowMs: number }): Promise<SecretRow> {
  const { rows } = await db.query<SecretRow>(
    `INSERT INTO secrets (org_id, name, sealed, updated_at) VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))
     ON CONFLICT (org_id, name) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at RETURNING *`,
    [row.orgId, row.name, row.sealed, row.nowMs],
  );
  return rows[0];
}

export async function deleteSecret(db: Queryable, orgId: number, name: string): Promise<boolean> {
  const result = await db.query("DELETE FROM secrets WHERE org_id = $1 AND name = $2", [orgId, name]);
  return (result.rowCount ?? 0) > 0;
}

export async function secretsOf(db: Queryable, orgId: number): Promise<SecretRow[]> {
  const { rows } = await db.query<SecretRow>("SELECT * FROM secrets WHERE org_id = $1 ORDER BY name", [orgId]);
  return rows;
}

/** The additional data a sealed secret is bound to: it cannot be moved to another org or name. */
export function secretAad(orgId: number, name: string): string {
  return `secret:${orgId}:${name}`;
}

/** An organization's content items, most recently changed first. */
export async function listContent(db: Queryable, orgId: number, page: PageRange): Promise<ListPage<ContentRow>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM content WHERE org_id = $1", [orgId]),
    db.query<ContentRow>("SELECT * FROM content WHERE org_id = $1 ORDER BY updated_at DESC, content_key LIMIT $2 OFFSET $3", [
      orgId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}

/** An organization's secret names, most recently changed first: never a sealed value. */
export async function listSecretNames(
  db: Queryable,
  orgId: number,
  page: PageRange,
): Promise<ListPage<Pick<SecretRow, "name" | "updated_at">>> {
  const [count, found] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM secrets WHERE org_id = $1", [orgId]),
    db.query<Pick<SecretRow, "name" | "updated_at">>(
      "SELECT name, updated_at FROM secrets WHERE org_id = $1 ORDER BY updated_at DESC, name LIMIT $2 OFFSET $3",
      [orgId, page.limit, page.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}
