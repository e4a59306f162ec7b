import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";

export interface BotcheckSettings {
  enabled: boolean;
  hold_ms: number;
  allow_desktop: boolean;
  allow_tablet: boolean;
  allow_mobile: boolean;
  blocked_url?: string | null;
  /** Leading zero bits of the hold's proof-of-work (docs/botcheck.md); absent in settings stored before it existed: the default. */
  difficulty?: number;
}

/**
 * Fields an operator sets (operator-api.md section 2, key body), declared once: the row
 * (KeyRow), the snapshot verify reads (KeySnapshot) and the admin schema (keys.ts,
 * `satisfies Record<keyof KeySettings, …>`) derive from it.
 */
export interface KeySettings {
  name: string;
  domain: string | null;
  environment: string;
  industry: string;
  scopes: string[];
  ip_allow: string[];
  ip_deny: string[];
  ip_binding: boolean;
  countries_allow: string[];
  countries_block: string[];
  rate_per_minute: number;
  rate_per_source_per_minute: number | null;
  is_trial: boolean;
  expires_at: string | null;
  botcheck: BotcheckSettings;
  firewall: Record<string, unknown> | null;
  content_origin: string | null;
}

/** An api_keys row: the settings (expires_at as a timestamp) plus identity and lifecycle. */
export interface KeyRow extends Omit<KeySettings, "expires_at"> {
  id: number;
  org_id: number;
  key_hash: Buffer;
  prefix: string;
  kind: "client" | "server";
  expires_at: Date | null;
  status: "active" | "suspended" | "revoked";
  suspended_by: string | null;
  revoked_at: Date | null;
  rotated_from: number | null;
  /** End of the grace of a rotation that replaced this key: refused `invalid_key` from then on (null: not being replaced). */
  retires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const SETTING_COLUMNS = [
  "name",
  "domain",
  "environment",
  "industry",
  "scopes",
  "ip_allow",
  "ip_deny",
  "ip_binding",
  "countries_allow",
  "countries_block",
  "rate_per_minute",
  "rate_per_source_per_minute",
  "is_trial",
  "expires_at",
  "botcheck",
  "firewall",
  "content_origin",
] as const satisfies readonly (keyof KeySettings)[];

const JSON_COLUMNS = new Set(["botcheck", "firewall"]);

function columnValue(column: keyof KeySettings, value: unknown): unknown {
  if (JSON_COLUMNS.has(column)) return value === null ? null : JSON.stringify(value);
  return value;
}

/** Keys the plan's key count applies to: live and not on their way out (a rotation's grace). */
export async function countLiveKeys(db: Queryable, orgId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1 AND status <> 'revoked' AND retires_at IS NULL",
    [orgId],
  );
  return rows[0].n;
}

/** Keys still working in a rotation's grace (replaced, their end ahead). */
export async function countKeysInGrace(db: Queryable, orgId: number, nowMs: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1 AND status <> 'revoked' AND retires_at > to_timestamp($2 / 1000.0)",
    [orgId, nowMs],
  );
  return rows[0].n;
}

export async function insertKey(
  db: Queryable,
  key: {
    orgId: number;
    hash: Buffer;
    prefix: string;
    kind: "client" | "server";
    settings: KeySettings;
    nowMs: number;
    rotatedFrom?: number;
  },
): Promise<KeyRow> {
  const values = SETTING_COLUMNS.map((c) => columnValue(c, key.settings[c]));
  const placeholders = SETTING_COLUMNS.map((_, i) => `$${i + 7}`);
  const { rows } = await db.query<KeyRow>(
    `INSERT INTO api_keys (org_id, key_hash, prefix, kind, rotated_from, created_at, updated_at, ${SETTING_COLUMNS.join(", ")})
     VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), to_timestamp($6 / 1000.0), ${placeholders.join(", ")})
     RETURNING *`,
    [key.orgId, key.hash, key.prefix, key.kind, key.rotatedFrom ?? null, key.nowMs, ...values],
  );
  return rows[0];
}

export async function findKey(db: Queryable, id: number): Promise<KeyRow | null> {
  const { rows } = await db.query<KeyRow>("SELECT * FROM api_keys WHERE id = $1", [id]);
  return rows[0] ?? null;
}

export async function updateKeySettings(db: Queryable, id: number, change: Partial<KeySettings>, nowMs: number): Promise<KeyRow | null> {
  const columns = SETTING_COLUMNS.filter((c) => c in change);
  const sets = columns.map((c, i) => `${c} = $${i + 3}`);
  const { rows } = await db.query<KeyRow>(
    `UPDATE api_keys SET ${[...sets, "updated_at = to_timestamp($2 / 1000.0)"].join(", ")}
     WHERE id = $1 AND status <> 'revoked' RETURNING *`,
    [id, nowMs, ...columns.map((c) => columnValue(c, change[c]))],
  );
  return rows[0] ?? null;
}

export async function setKeyStatus(
  db: Queryable,
  id: number,
  status: KeyRow["status"],
  nowMs: number,
  by: string | null = null,
): Promise<KeyRow | null> {
  // A revoked key never comes back: the WHERE clause makes revocation final.
  const { rows } = await db.query<KeyRow>(
    `UPDATE api_keys SET status = $2, suspended_by = CASE WHEN $2 = 'suspended' THEN $4 END,
       revoked_at = CASE WHEN $2 = 'revoked' THEN to_timestamp($3 / 1000.0) ELSE revoked_at END,
       updated_at = to_timestamp($3 / 1000.0)
     WHERE id = $1 AND status <> 'revoked' RETURNING *`,
    [id, status, nowMs, by],
  );
  return rows[0] ?? null;
}

export async function keysOfOrg(db: Queryable, orgId: number): Promise<KeyRow[]> {
  const { rows } = await db.query<KeyRow>("SELECT * FROM api_keys WHERE org_id = $1 ORDER BY id", [orgId]);
  return rows;
}

export interface InstallationRow {
  key_id: number;
  install: string;
  status: "approved" | "pending" | "blocked";
  first_seen_at: Date;
  last_seen_at: Date;
}

export async function installationsOf(db: Queryable, keyId: number): Promise<InstallationRow[]> {
  const { rows } = await db.query<InstallationRow>("SELECT * FROM installations WHERE key_id = $1 ORDER BY first_seen_at, install", [
    keyId,
  ]);
  return rows;
}

/**
 * A page of a key's installations, newest first (by first sighting). `live` is the key's Redis
 * hash (install → status), what verify judges calls by: its status stands where it holds one,
 * and the installations only it has seen yet (the counting script records a sighting there
 * before the usage actor writes the row) come first, as first seen at `nowMs`. Pages are cut in
 * SQL; the hash is passed in whole (at most ~600 pending entries a key,
 * PENDING_INSTALL_RETENTION_MS, and those an owner decided on by hand).
 */
export async function installationsPageOf(
  db: Queryable,
  keyId: number,
  live: Readonly<Record<string, string>>,
  nowMs: number,
  page: PageRange,
): Promise<ListPage<InstallationRow>> {
  const entries = Object.entries(live);
  const listed = `WITH live AS (SELECT * FROM unnest($2::text[], $3::text[]) AS l (install, status)),
    listed AS (
      SELECT i.install, COALESCE(l.status, i.status) AS status, i.first_seen_at, i.last_seen_at, true AS recorded
      FROM installations i LEFT JOIN live l ON l.install = i.install WHERE i.key_id = $1
      UNION ALL
      SELECT l.install, l.status, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0), false
      FROM live l WHERE NOT EXISTS (SELECT 1 FROM installations i WHERE i.key_id = $1 AND i.install = l.install)
    )`;
  const args = [keyId, entries.map(([install]) => install), entries.map(([, status]) => status), nowMs];
  const [count, found] = await Promise.all([
    db.query<{ n: number }>(`${listed} SELECT count(*)::int AS n FROM listed`, args),
    db.query<InstallationRow>(
      `${listed} SELECT $1::bigint AS key_id, install, status, first_seen_at, last_seen_at FROM listed
       ORDER BY recorded, first_seen_at DESC, install LIMIT $5 OFFSET $6`,
      [...args, page.limit, page.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}

/** Records a sighting; the first status written wins (a later sighting only moves last_seen_at). */
export async function upsertInstallation(
  db: Queryable,
  row: { keyId: number; install: string; status: InstallationRow["status"]; seenMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0))
     ON CONFLICT (key_id, install) DO UPDATE SET
       last_seen_at = GREATEST(installations.last_seen_at, EXCLUDED.last_seen_at),
       first_seen_at = LEAST(installations.first_seen_at, EXCLUDED.first_seen_at)`,
    [row.keyId, row.install, row.status, row.seenMs],
  );
}

export async function setInstallationStatus(
  db: Queryable,
  keyId: number,
  install: string,
  status: "approved" | "blocked",
  nowMs: number,
): Promise<InstallationRow> {
  const { rows } = await db.query<InstallationRow>(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0))
     ON CONFLICT (key_id, install) DO UPDATE SET status = EXCLUDED.status RETURNING *`,
    [keyId, install, status, nowMs],
  );
  return rows[0];
}

/** A rotated key's successor keeps its installations (rotation must not lock the site out). */
export async function copyInstallations(tx: Queryable, fromKeyId: number, toKeyId: number): Promise<void> {
  await tx.query(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     SELECT $2, install, status, first_seen_at, last_seen_at FROM installations WHERE key_id = $1`,
    [fromKeyId, toKeyId],
  );
}

/**
 * The key that replaced `keyId` by rotation and is not itself revoked: its successor, or
 * the successor's successor when that one was rotated too. Null when there is none.
 */
export async function liveHeirOf(db: Queryable, keyId: number): Promise<number | null> {
  const { rows } = await db.query<{ id: number }>(
    `WITH RECURSIVE heirs (id, status, depth) AS (
       SELECT id, status, 1 FROM api_keys WHERE rotated_from = $1
       UNION ALL
       SELECT k.id, k.status, h.depth + 1 FROM api_keys k JOIN heirs h ON k.rotated_from = h.id WHERE h.depth < 64
     )
     SELECT id FROM heirs WHERE status <> 'revoked' ORDER BY depth LIMIT 1`,
    [keyId],
  );
  return rows.length === 0 ? null : Number(rows[0].id);
}

/**
 * Installations a rotated key's successor took over from Redis (projector, key-retire-3.lua
 * and key-inherit-2.lua) that PostgreSQL does not hold for it yet: seen just before the
 * rotation or during its grace, their usage events not yet applied. A row already there is
 * kept, unless it is only `pending` and the old key's status is a decision: the scripts' rule.
 */
export async function inheritInstallations(
  db: Queryable,
  keyId: number,
  rows: readonly { install: string; status: string }[],
  nowMs: number,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at)
     SELECT $1, i, s, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0)
     FROM unnest($2::text[], $3::text[]) AS t(i, s)
     WHERE s IN ('approved', 'pending', 'blocked')
     ON CONFLICT (key_id, install) DO UPDATE SET status = EXCLUDED.status
     WHERE installations.status = 'pending' AND EXCLUDED.status <> 'pending'`,
    [keyId, rows.map((r) => r.install), rows.map((r) => r.status), nowMs],
  );
}

/** A key row with when it was last used (null: never, as far as the usage actor applied). */
export interface KeyListRow extends KeyRow {
  last_used_at: Date | null;
}

export interface KeyListFilter extends PageRange {
  /** The admin `status`: `expired` is an active key past its effective end. */
  status?: "active" | "suspended" | "revoked" | "expired";
  kind?: "client" | "server";
  nowMs: number;
  /** The end of the organization's window at `nowMs` (shared/accounts/plans.ts windowEnd): keys expire at it. */
  windowEndMs: number;
}

/** An organization's keys, newest first, filtered by the status the admin API shows and by kind. */
export async function listKeysOfOrg(db: Queryable, orgId: number, filter: KeyListFilter): Promise<ListPage<KeyListRow>> {
  // The effective end is the earlier of the key's hard end and the organization's window.
  const where = `k.org_id = $1 AND ($2::text IS NULL OR k.kind = $2)
    AND ($3::text IS NULL
      OR ($3 = 'expired' AND k.status = 'active' AND LEAST(k.expires_at, to_timestamp($5 / 1000.0)) <= to_timestamp($4 / 1000.0))
      OR ($3 = 'active' AND k.status = 'active' AND LEAST(k.expires_at, to_timestamp($5 / 1000.0)) > to_timestamp($4 / 1000.0))
      OR ($3 IN ('suspended', 'revoked') AND k.status = $3))`;
  const args = [orgId, filter.kind ?? null, filter.status ?? null, filter.nowMs, filter.windowEndMs];
  const [count, found] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys k WHERE ${where}`, args),
    db.query<KeyListRow>(
      `SELECT k.*, u.last_used_at FROM api_keys k LEFT JOIN key_last_used u ON u.key_id = k.id WHERE ${where}
       ORDER BY k.created_at DESC, k.id DESC LIMIT $6 OFFSET $7`,
      [...args, filter.limit, filter.offset],
    ),
  ]);
  return { total: count.rows[0].n, rows: found.rows };
}

/**
 * Schedules the end of a key a rotation replaces (`POST /keys/:id/rotate` with `grace_s`):
 * null when the key is revoked or already on its way out (its row is locked either way).
 */
export async function scheduleRetirement(tx: Queryable, id: number, retiresAtMs: number, nowMs: number): Promise<KeyRow | null> {
  const { rows } = await tx.query<KeyRow>(
    `UPDATE api_keys SET retires_at = to_timestamp($2 / 1000.0), updated_at = to_timestamp($3 / 1000.0)
     WHERE id = $1 AND status <> 'revoked' AND retires_at IS NULL RETURNING *`,
    [id, retiresAtMs, nowMs],
  );
  return rows[0] ?? null;
}

/** Keys whose rotation grace ended and that are not retired yet (the retirement sweep's work). */
export async function dueRetirements(db: Queryable, nowMs: number, limit: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT id FROM api_keys WHERE retires_at <= to_timestamp($1 / 1000.0) AND status <> 'revoked' ORDER BY retires_at, id LIMIT $2`,
    [nowMs, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Retires a key whose grace ended: revoked, as of the end of its grace. Null when another
 * process (or a revocation) got there first: the conditional UPDATE is the claim.
 */
export async function retireKey(tx: Queryable, id: number, nowMs: number): Promise<KeyRow | null> {
  const { rows } = await tx.query<KeyRow>(
    `UPDATE api_keys SET status = 'revoked', suspended_by = NULL, revoked_at = retires_at, updated_at = to_timestamp($2 / 1000.0)
     WHERE id = $1 AND status <> 'revoked' AND retires_at <= to_timestamp($2 / 1000.0) RETURNING *`,
    [id, nowMs],
  );
  return rows[0] ?? null;
}

/**
 * The keys an owner's decision on an installation of `keyId` applies to as well: while a
 * rotation's grace runs, the old key and the key that replaces it honour the same decisions
 * (its live successor when `keyId` is retiring, its predecessor when that one is).
 */
export async function gracePartnersOf(db: Queryable, keyId: number, nowMs: number): Promise<{ id: number; org_id: number }[]> {
  const { rows } = await db.query<{ id: number; org_id: number }>(
    `SELECT s.id, s.org_id FROM api_keys k JOIN api_keys s ON s.rotated_from = k.id
     WHERE k.id = $1 AND k.status <> 'revoked' AND k.retires_at > to_timestamp($2 / 1000.0) AND s.status <> 'revoked'
     UNION
     SELECT p.id, p.org_id FROM api_keys k JOIN api_keys p ON p.id = k.rotated_from
     WHERE k.id = $1 AND p.status <> 'revoked' AND p.retires_at > to_timestamp($2 / 1000.0)`,
    [keyId, nowMs],
  );
  return rows;
}
