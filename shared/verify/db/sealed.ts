import { secretAad } from "./content.js";
import type { Queryable } from "../../platform/db/pool.js";

/**
 * Every column sealed under the master secret (shared/platform/crypto/seal.ts), and the two
 * queries `gateway secrets reseal` runs on each (ops/cli/secrets-reseal.ts): the table
 * and column names come from this fixed list, never from input.
 */

export interface SealedRow {
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
  {
    table: "siem_destinations",
    column: "token_sealed",
    id: "id::text",
    where: "org_id = $2 AND id = $3::bigint",
    aad: (r) => `siem:${r.org_id}:${r.id}`,
  },
  {
    table: "webhooks",
    column: "secret_sealed",
    id: "id::text",
    where: "org_id = $2 AND id = $3::bigint",
    aad: (r) => `webhook:${r.org_id}:${r.id}`,
  },
];

/** Every sealed value of one column, locked for the rest of the transaction. */
export async function lockSealedRows(tx: Queryable, spec: SealedColumn): Promise<SealedRow[]> {
  const { rows } = await tx.query<SealedRow>(
    `SELECT org_id, ${spec.id} AS id, ${spec.column} AS sealed FROM ${spec.table} WHERE ${spec.column} IS NOT NULL ORDER BY org_id, ${spec.id} FOR UPDATE`,
  );
  return rows;
}

export async function writeSealed(tx: Queryable, spec: SealedColumn, row: SealedRow, sealed: Buffer): Promise<void> {
  await tx.query(`UPDATE ${spec.table} SET ${spec.column} = $1 WHERE ${spec.where}`, [sealed, row.org_id, row.id]);
}
