/** Shared plumbing of the runtime tests: a real Redis under a unique prefix, and polling. */
import { randomUUID } from "node:crypto";
import type { Redis } from "../../../shared/platform/redis/client.js";
import { systemClock } from "../../../shared/platform/clock.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { createRedis } from "../../../shared/platform/redis/client.js";
import { createKeys, type Keys } from "../../../shared/platform/redis/keys.js";
import type { BaseDeps } from "../../../actors/runtime/index.js";

export const REDIS_URL = "redis://127.0.0.1:6379";

export interface TestRedis {
  redis: Redis;
  keys: Keys;
  deps(consumerName: string): BaseDeps;
  /** Delete every key under the prefix and close the connection. */
  cleanup(): Promise<void>;
}

export function testRedis(file: string): TestRedis {
  const prefix = `t:runtime:${file}:${randomUUID().slice(0, 8)}:`;
  const redis = createRedis(REDIS_URL, `test-${file}`);
  const keys = createKeys(prefix);
  return {
    redis,
    keys,
    deps: (consumerName) => ({ redis, keys, clock: systemClock(), logger: silentLogger(), consumerName }),
    async cleanup() {
      let cursor = "0";
      do {
        const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        if (found.length > 0) await redis.del(...found);
        cursor = next;
      } while (cursor !== "0");
      await redis.quit();
    },
  };
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/** Poll until `probe` returns a truthy value (returned), or fail after timeoutMs. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  { timeoutMs = 5_000, intervalMs = 15 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (last) return last as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last value: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A promise a test resolves by hand: a handler blocked on it is "in flight". */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export async function pendingCount(redis: Redis, stream: string, group: string): Promise<number> {
  const summary = (await redis.xpending(stream, group)) as unknown[];
  return Number(summary[0]);
}

/** A JSON schema and type used by most tests. */
export interface Job {
  n: number;
}

export const jobSchema = {
  type: "object",
  properties: { n: { type: "integer" } },
  required: ["n"],
  additionalProperties: false,
} as const;
