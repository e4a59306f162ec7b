import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/pool.js";
import { storeSettingOnce } from "../db/settings.js";
import type { Logger } from "../log.js";

/**
 * The master secret: GATEWAY_SECRET when set; otherwise a development secret generated
 * once and kept in PostgreSQL (so every process of the deployment shares it), with a
 * warning. Only outside production: a production process refuses to start without
 * GATEWAY_SECRET (requireProductionSecret in shared/platform/config.ts, docs/security.md).
 */
export async function resolveMasterSecret(db: Queryable, configured: Buffer | null, logger: Logger, nowMs: number): Promise<Buffer> {
  if (configured) return configured;
  const stored = await storeSettingOnce(db, "dev_master_secret", randomBytes(32), nowMs);
  logger.warn("GATEWAY_SECRET is not set: using a development secret stored in the database");
  return stored;
}
