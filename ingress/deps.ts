import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import type { Clock, SharedTestClock } from "../shared/clock.js";
import type { Config } from "../shared/config.js";
import type { Pool } from "../shared/db/pool.js";
import type { Logger } from "../shared/log.js";
import type { Keys } from "../shared/redis/keys.js";
import type { Projector } from "../shared/snapshots/projector.js";
import type { SnapshotCache } from "../shared/snapshots/cache.js";

/** Everything a route or admin handler may use, built once at start and passed down. */
export interface IngressDeps {
  config: Config;
  clock: Clock;
  /** Present only with GATEWAY_TEST_CLOCK=1. */
  testClock: SharedTestClock | null;
  logger: Logger;
  redis: Redis;
  keys: Keys;
  db: Pool;
  masterSecret: Buffer;
  projector: Projector;
  snapshots: SnapshotCache;
  metrics: Registry;
  /** The public base (`SITE_URL/api/v1`), known after listen when PORT=0. */
  baseUrl(): string;
}
