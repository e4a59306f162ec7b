import type { Redis } from "ioredis";
import { type Config, ConfigError, parseSecret } from "../../shared/config.js";
import { seal, unseal } from "../../shared/crypto/seal.js";
import { secretAad } from "../../shared/db/content.js";
import { createPool, resolveDatabaseUrl, transaction, type PoolClient } from "../../shared/db/pool.js";
import type { Keys } from "../../shared/redis/keys.js";
import { type CliIo, CliFailure, EXIT, print, printJson, UsageError } from "./io.js";

/**
 * `gateway secrets reseal --old SECRET --new SECRET`: rotating GATEWAY_SECRET. Every
 * value sealed under the master secret (shared/crypto/seal.ts) is opened with the old
 * secret and sealed again with the new one, with the same additional data, in ONE
 * PostgreSQL transaction: either every row moves or none does. Then the snapshot
 * sentinel is deleted, so running gateways rebuild their Redis snapshots (the secret
 * snapshot holds sealed bytes) from PostgreSQL. Procedure: docs/secret.md.
 *
 * A row that already opens with the new secret is left as it is, so running the
 * command twice is harmless. A row that opens with neither aborts the whole transaction
 * and names the row: nothing is changed.
 */

interface SealedRow {
  org_id: number;
  id: string;
  sealed: Buffer;
}

/** Where sealed values live, and the additional data each is bound to. */
export interface SealedColumn {
  table: string;
  column: string;
  /** SQL expression identifying a row, selected as `id`. */
  id: string;
  /** The row's primary key condition, given `id`. */
  where: string;
  aad(row: SealedRow): string;
}

/**
 * Runtime secrets are the only sealed values written today. SIEM tokens and webhook
 * secrets have their columns ready (nullable token_sealed, secret_sealed); the additional
 * data below is what their writers must use, so that they rotate with the rest.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "secrets", column: "sealed", id: "name", where: "org_id = $2 AND name = $3", aad: (r) => secretAad(r.org_id, r.id) },
  { table: "siem_destinations", column: "token_sealed", id: "id::text", where: "org_id = $2 AND id = $3::bigint", aad: (r) => `siem:${r.org_id}:${r.id}` },
  { table: "webhooks", column: "secret_sealed", id: "id::text", where: "org_id = $2 AND id = $3::bigint", aad: (r) => `webhook:${r.org_id}:${r.id}` },
];

export interface ResealCount {
  table: string;
  resealed: number;
  /** Rows that already opened with the new secret (a second run). */
  unchanged: number;
}

function secretOption(name: string, raw: string): Buffer {
  try {
    return parseSecret(`--${name}`, raw);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

function opens(master: Buffer, sealed: Buffer, aad: string): string | null {
  try {
    return unseal(master, sealed, aad);
  } catch {
    return null;
  }
}

async function resealColumn(tx: PoolClient, spec: SealedColumn, oldKey: Buffer, newKey: Buffer): Promise<ResealCount> {
  const { rows } = await tx.query<SealedRow>(
    `SELECT org_id, ${spec.id} AS id, ${spec.column} AS sealed FROM ${spec.table} WHERE ${spec.column} IS NOT NULL ORDER BY org_id, ${spec.id} FOR UPDATE`,
  );
  const count: ResealCount = { table: spec.table, resealed: 0, unchanged: 0 };
  for (const row of rows) {
    const aad = spec.aad(row);
    const plaintext = opens(oldKey, row.sealed, aad);
    if (plaintext === null) {
      if (opens(newKey, row.sealed, aad) !== null) {
        count.unchanged++;
        continue;
      }
      throw new CliFailure(`${spec.table} row ${JSON.stringify(row.id)} of organization ${row.org_id} opens with neither --old nor --new: nothing was changed`);
    }
    await tx.query(`UPDATE ${spec.table} SET ${spec.column} = $1 WHERE ${spec.where}`, [seal(newKey, plaintext, aad), row.org_id, row.id]);
    count.resealed++;
  }
  return count;
}

/** Re-seals every sealed column in one transaction; returns what moved. */
export async function resealAll(databaseUrl: string, oldKey: Buffer, newKey: Buffer): Promise<ResealCount[]> {
  const pool = createPool(databaseUrl, 1);
  try {
    return await transaction(pool, async (tx) => {
      const counts: ResealCount[] = [];
      for (const spec of SEALED_COLUMNS) counts.push(await resealColumn(tx, spec, oldKey, newKey));
      return counts;
    });
  } finally {
    await pool.end().catch(() => {});
  }
}

export async function resealCommand(options: {
  config: Config;
  pgUser: string | undefined;
  redis: Redis;
  keys: Keys;
  io: CliIo;
  json: boolean;
  oldSecret: string;
  newSecret: string;
}): Promise<number> {
  const oldKey = secretOption("old", options.oldSecret);
  const newKey = secretOption("new", options.newSecret);
  if (oldKey.equals(newKey)) throw new UsageError("--old and --new are the same secret");
  // Redis must be reachable before anything changes: the rebuild after the commit needs it.
  await options.redis.ping();
  const counts = await resealAll(resolveDatabaseUrl(options.config.databaseUrl, options.pgUser), oldKey, newKey);
  const sentinelDeleted = (await options.redis.del(options.keys.snapshotSentinel())) === 1;
  if (options.json) {
    printJson(options.io, { ok: true, tables: counts, sentinel_deleted: sentinelDeleted });
  } else {
    for (const c of counts) print(options.io, `${c.table}: ${c.resealed} resealed${c.unchanged ? `, ${c.unchanged} already under the new secret` : ""}`);
    print(options.io, "Committed. Snapshot sentinel deleted: gateways rebuild their snapshots from PostgreSQL.");
    print(options.io, "Now restart every gateway process with GATEWAY_SECRET set to the new secret.");
  }
  return EXIT.ok;
}
