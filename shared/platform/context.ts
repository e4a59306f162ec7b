import type { Redis } from "./redis/client.js";
import { sharedTestClock, systemClock, type Clock, type SharedTestClock } from "./clock.js";
import { requireProductionSecret, type Config } from "./config.js";
import { resolveMasterSecret } from "./crypto/master.js";
import { createPool, resolveDatabaseUrl, type Pool } from "./db/pool.js";
import { createLogger, type Logger } from "./log.js";
import { createRedis } from "./redis/client.js";
import { createKeys, type Keys } from "./redis/keys.js";

/** The connections and services one process needs, opened once and closed once. */
export interface Context {
  config: Config;
  logger: Logger;
  redis: Redis;
  keys: Keys;
  db: Pool;
  /**
   * Where the read-only endpoints read (DATABASE_READ_URL, a replica; else the same pool as
   * `db`). Only reads that tolerate a replica's lag use it: never a read after a write of the
   * same request.
   */
  readDb: Pool;
  clock: Clock;
  testClock: SharedTestClock | null;
  masterSecret: Buffer;
  close(): Promise<void>;
}

export async function openContext(config: Config, role: string, options: { logger?: Logger; pgUser?: string } = {}): Promise<Context> {
  requireProductionSecret(config);
  const logger = options.logger ?? createLogger(config.logLevel, role);
  const redis = createRedis(config.redisUrl, `gateway:${role}`);
  redis.on("error", (error: Error) => logger.debug({ err: error }, "redis connection error"));
  const keys = createKeys(config.redisPrefix);
  const db = createPool(resolveDatabaseUrl(config.databaseUrl, options.pgUser));
  const readDb = config.databaseReadUrl === null ? db : createPool(resolveDatabaseUrl(config.databaseReadUrl, options.pgUser));
  const testClock = config.testClock ? await sharedTestClock(redis, keys) : null;
  const clock = testClock ?? systemClock();
  const masterSecret = await resolveMasterSecret(db, config.gatewaySecret, logger, clock.now());
  return {
    config,
    logger,
    redis,
    keys,
    db,
    readDb,
    clock,
    testClock,
    masterSecret,
    async close() {
      await testClock?.stop();
      redis.disconnect();
      await db.end().catch(() => {});
      if (readDb !== db) await readDb.end().catch(() => {});
    },
  };
}
