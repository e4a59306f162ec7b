import type { Redis } from "../../shared/platform/redis/client.js";
import { type Config, ConfigError, decodeSecret, parseSecret } from "../../shared/platform/config.js";
import { seal, unseal } from "../../shared/platform/crypto/seal.js";
import { lockSealedRows, SEALED_COLUMNS, writeSealed, type SealedColumn } from "../../shared/verify/index.js";
import { createPool, resolveDatabaseUrl, transaction, type PoolClient } from "../../shared/platform/db/pool.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { type CliIo, CliFailure, EXIT, print, printJson, UsageError } from "./io.js";

/**
 * `gateway secrets reseal --old SECRET --new SECRET`: rotating GATEWAY_SECRET. Every
 * value sealed under the master secret (shared/platform/crypto/seal.ts) is opened with the old
 * secret and sealed again with the new one, with the same additional data, in ONE
 * PostgreSQL transaction: either every row moves or none does. Then the snapshot
 * sentinel is deleted, so running gateways rebuild their Redis snapshots (the secret
 * snapshot holds sealed bytes) from PostgreSQL. Procedure: docs/secret.md.
 *
 * A row that already opens with the new secret is left as it is, so running the
 * command twice is harmless. A row that opens with neither aborts the whole transaction
 * and names the row: nothing is changed.
 */

export { SEALED_COLUMNS, type SealedColumn } from "../../shared/verify/index.js";

export interface ResealCount {
  table: string;
  resealed: number;
  /** Rows that already opened with the new secret (a second run). */
  unchanged: number;
}

/** --old is read whatever its strength (replacing a weak secret is the point); --new must look random. */
function secretOption(name: "old" | "new", raw: string): Buffer {
  try {
    return (name === "old" ? decodeSecret : parseSecret)(`--${name}`, raw);
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
  const rows = await lockSealedRows(tx, spec);
  const count: ResealCount = { table: spec.table, resealed: 0, unchanged: 0 };
  for (const row of rows) {
    const aad = spec.aad(row);
    const plaintext = opens(oldKey, row.sealed, aad);
    if (plaintext === null) {
      if (opens(newKey, row.sealed, aad) !== null) {
        count.unchanged++;
        continue;
      }
      throw new CliFailure(
        `${spec.table} row ${JSON.stringify(row.id)} of organization ${row.org_id} opens with neither --old nor --new: nothing was changed`,
      );
    }
    await writeSealed(tx, spec, row, seal(newKey, plaintext, aad));
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
    for (const c of counts)
      print(options.io, `${c.table}: ${c.resealed} resealed${c.unchanged ? `, ${c.unchanged} already under the new secret` : ""}`);
    print(options.io, "Committed. Snapshot sentinel deleted: gateways rebuild their snapshots from PostgreSQL.");
    print(options.io, "Now restart every gateway process with GATEWAY_SECRET set to the new secret.");
  }
  return EXIT.ok;
}
