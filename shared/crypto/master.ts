import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/pool.js";
import type { Logger } from "../log.js";

/**
 * The master secret: GATEWAY_SECRET when set; otherwise a development secret generated
 * once and kept in PostgreSQL (so every process of the deployment shares it), with a
 * warning. Production deployments set GATEWAY_SECRET.
 */
export async function resolveMasterSecret(
  db: Queryable,
  configured: Buffer | null,
  logger: Logger,
  nowMs: number,
): Promise<Buffer> {
  if (configured) return configured;
  await db.query(
    `INSERT INTO settings (name, value, created_at) VALUES ('dev_master_secret', $1, to_timestamp($2 / 1000.0))
     ON CONFLICT (name) DO NOTHING`,
    [randomBytes(32), nowMs],
  );
  const { rows } = await db.query<{ value: Buffer }>("SELECT value FROM settings WHERE name = 'dev_master_secret'");
  logger.warn("GATEWAY_SECRET is not set: using a development secret stored in the database");
  return rows[0].value;
}
