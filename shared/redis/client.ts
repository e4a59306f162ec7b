import { Redis } from "ioredis";

export type { Redis };

/** A Redis connection that fails fast instead of queueing forever when Redis is down. */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: 2,
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    lazyConnect: false,
  });
}
