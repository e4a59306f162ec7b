import { createHash, randomBytes } from "node:crypto";
import type { Redis } from "../platform/redis/client.js";
import type { Clock } from "../platform/clock.js";
import type { Queryable } from "../platform/db/pool.js";
import type { Logger } from "../platform/log.js";
import type { Keys } from "../platform/redis/keys.js";
import { buildSnapshot, type BuildOptions, type StatusSnapshot } from "./document.js";

/**
 * The status document, built at most once a minute for the whole deployment.
 *
 * One Redis hash holds the public JSON, its ETag, the build time and the full snapshot
 * the page, feed and badge render from. A reader finds it fresh (built less than
 * FRESH_MS ago on the shared clock) and is served. Stale or missing: one process wins
 * the build lock (SET NX) and rebuilds; the others keep serving the stale copy, or, when
 * there is none at all, wait for the winner's. Inside a process one promise carries a
 * refresh, so a thousand readers at once make one Redis lock attempt, not a thousand.
 * A process remembers the last copy it read and fetches only the ETag while it matches.
 */

export const FRESH_MS = 60_000;
const LOCK_MS = 15_000;
const WAIT_STEP_MS = 25;
/** Kept long after it is stale: a stale page is better than none while a rebuild runs. */
const KEEP_S = 7 * 86_400;

export interface CachedStatus {
  readonly builtAtMs: number;
  readonly etag: string;
  /** The public document (interface.md 2.9), serialized once per build. */
  readonly json: string;
  snapshot(): StatusSnapshot;
}

export interface StatusCache {
  current(): Promise<CachedStatus>;
  /** Drops the cached copy (an operator changed the page): the next reader rebuilds. */
  invalidate(): Promise<void>;
  /** Builds this process ran (tests, metrics). */
  builds(): number;
}

export interface StatusCacheDeps {
  redis: Redis;
  keys: Keys;
  db: Queryable;
  clock: Clock;
  logger: Logger;
  options: () => Omit<BuildOptions, "nowMs">;
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function etagOf(json: string): string {
  return `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"`;
}

export function createStatusCache(deps: StatusCacheDeps): StatusCache {
  const { redis, keys, clock } = deps;
  let memo: CachedStatus | null = null;
  let refreshing: Promise<CachedStatus> | null = null;
  let buildCount = 0;

  const fromFields = (builtAt: string, etag: string, json: string, snapshotText: string): CachedStatus => {
    let parsed: StatusSnapshot | null = null;
    return {
      builtAtMs: Number(builtAt),
      etag,
      json,
      snapshot: () => (parsed ??= JSON.parse(snapshotText) as StatusSnapshot),
    };
  };

  const read = async (): Promise<CachedStatus | null> => {
    const [builtAt, etag] = await redis.hmget(keys.statusDocument(), "built_at", "etag");
    if (builtAt === null || etag === null) return null;
    if (memo !== null && memo.etag === etag && memo.builtAtMs === Number(builtAt)) return memo;
    const [json, snapshotText] = await redis.hmget(keys.statusDocument(), "json", "snapshot");
    if (json === null || snapshotText === null) return null;
    memo = fromFields(builtAt, etag, json, snapshotText);
    return memo;
  };

  const build = async (): Promise<CachedStatus> => {
    const nowMs = clock.now();
    const snapshot = await buildSnapshot(deps.db, { ...deps.options(), nowMs });
    buildCount++;
    const json = JSON.stringify(snapshot.document);
    const snapshotText = JSON.stringify(snapshot);
    const etag = etagOf(json);
    await redis
      .multi()
      .hset(keys.statusDocument(), { built_at: String(nowMs), etag, json, snapshot: snapshotText })
      .expire(keys.statusDocument(), KEEP_S)
      .exec();
    memo = fromFields(String(nowMs), etag, json, snapshotText);
    return memo;
  };

  const refresh = async (stale: CachedStatus | null): Promise<CachedStatus> => {
    const token = randomBytes(8).toString("hex");
    const won = await redis.set(keys.statusBuildLock(), token, "PX", LOCK_MS, "NX");
    if (won === "OK") {
      try {
        return await build();
      } finally {
        await redis.eval(RELEASE, 1, keys.statusBuildLock(), token).catch(() => {});
      }
    }
    if (stale !== null) return stale;
    // Nothing to serve yet: wait for the winner's copy (bounded by its lock).
    const deadline = Date.now() + LOCK_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      const found = await read();
      if (found !== null) return found;
      if ((await redis.exists(keys.statusBuildLock())) === 0) return refresh(null);
    }
    throw new Error("status document: no copy and the build lock never released");
  };

  return {
    async current() {
      const found = await read();
      if (found !== null && clock.now() - found.builtAtMs < FRESH_MS) return found;
      refreshing ??= refresh(found).finally(() => {
        refreshing = null;
      });
      return refreshing;
    },
    async invalidate() {
      memo = null;
      await redis.del(keys.statusDocument());
    },
    builds: () => buildCount,
  };
}
