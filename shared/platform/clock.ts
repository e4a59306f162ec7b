import { duplicateRedis, type Redis } from "./redis/client.js";
import type { Keys } from "./redis/keys.js";

/**
 * The one clock. Every part reads time from here so the test clock moves all of them.
 * `now()` is synchronous (the verify hot path cannot wait for Redis); with the test
 * clock on, the offset lives in Redis and every process follows it through pub/sub,
 * with a one-second poll as a safety net. The offset only ever grows, so the clock
 * never runs backwards even if Redis forgets it.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Whole seconds since the Unix epoch. */
  nowSeconds(): number;
  /** Called after the test clock moved (actors waiting for time re-check at once). */
  onMove(listener: () => void): () => void;
}

export interface TestClockControl {
  advance(seconds: number): Promise<number>;
}

export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    nowSeconds: () => Math.floor(Date.now() / 1000),
    onMove: () => () => {},
  };
}

/** A clock a test moves by hand, for pure unit tests. */
export function manualClock(startMs: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let current = startMs;
  const listeners = new Set<() => void>();
  return {
    now: () => current,
    nowSeconds: () => Math.floor(current / 1000),
    onMove: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(ms) {
      current = ms;
      for (const l of listeners) l();
    },
    advance(ms) {
      current += ms;
      for (const l of listeners) l();
    },
  };
}

export interface SharedTestClock extends Clock, TestClockControl {
  stop(): Promise<void>;
}

/**
 * The shared test clock. `redis` serves reads and writes; a duplicate connection
 * subscribes to the move channel.
 */
export async function sharedTestClock(redis: Redis, keys: Keys): Promise<SharedTestClock> {
  let offsetMs = 0;
  const listeners = new Set<() => void>();
  const apply = (raw: string | null) => {
    const next = Number(raw ?? 0);
    if (Number.isFinite(next) && next > offsetMs) {
      offsetMs = next;
      for (const l of listeners) l();
    }
  };
  apply(await redis.get(keys.clockOffset()));
  const subscriber = duplicateRedis(redis);
  // Connection errors are retried by ioredis; without a listener they would be "unhandled".
  subscriber.on("error", () => {});
  await subscriber.subscribe(keys.clockChannel());
  subscriber.on("message", (_channel: string, message: string) => apply(message));
  const poll = setInterval(() => {
    redis.get(keys.clockOffset()).then(apply, () => {});
  }, 1000);
  poll.unref();
  return {
    now: () => Date.now() + offsetMs,
    nowSeconds: () => Math.floor((Date.now() + offsetMs) / 1000),
    onMove: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async advance(seconds: number) {
      // Never below what this process has seen: a flushed Redis must not rewind time.
      const script = `local v = tonumber(redis.call('GET', KEYS[1]) or '0')
        if v < tonumber(ARGV[2]) then v = tonumber(ARGV[2]) end
        v = v + tonumber(ARGV[1]); redis.call('SET', KEYS[1], v); redis.call('PUBLISH', ARGV[3], v); return v`;
      // The channel is an argument, not a key: on a Redis Cluster every key of a script must share one slot.
      const next = await redis.eval(script, 1, keys.clockOffset(), Math.round(seconds * 1000), offsetMs, keys.clockChannel());
      apply(String(next));
      return Math.floor((Date.now() + offsetMs) / 1000);
    },
    async stop() {
      clearInterval(poll);
      subscriber.disconnect();
    },
  };
}
