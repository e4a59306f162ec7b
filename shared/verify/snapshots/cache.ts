import { duplicateRedis, type Redis } from "../../platform/redis/client.js";
import { indexShardOf, type Keys } from "../../platform/redis/keys.js";
import type { KeySnapshot, OrgSnapshot, SnapshotChange, Versioned } from "./types.js";

/**
 * The ingress's in-process view of the Redis snapshots. A key seen once is served from
 * memory; the projector's pub/sub messages drop changed entries, and verify's counting
 * script compares the cached versions with Redis on every call, so a missed message
 * costs one reload, never a stale answer. Unknown keys are not cached (a key created a
 * moment ago must work at once).
 */

export interface Resolved {
  key: Versioned<KeySnapshot>;
  org: Versioned<OrgSnapshot>;
}

export type Lookup = { found: true; snapshot: Resolved } | { found: false; loading: boolean };

const MAX_ENTRIES = 100_000;

export function createSnapshotCache(redis: Redis, keys: Keys) {
  const byHash = new Map<string, Resolved>();
  const hashesOfKey = new Map<number, string>();
  const orgs = new Map<number, Versioned<OrgSnapshot>>();
  let subscriber: Redis | null = null;

  const dropKey = (keyId: number) => {
    const hash = hashesOfKey.get(keyId);
    if (hash) byHash.delete(hash);
    hashesOfKey.delete(keyId);
  };
  const dropOrg = (orgId: number) => {
    orgs.delete(orgId);
    for (const [hash, entry] of byHash) if (entry.org.value.id === orgId) byHash.delete(hash);
  };
  const clear = () => {
    byHash.clear();
    hashesOfKey.clear();
    orgs.clear();
  };

  const parse = <T>(raw: [string | null, string | null]): Versioned<T> | null =>
    raw[0] && raw[1] ? { value: JSON.parse(raw[0]) as T, v: raw[1] } : null;

  async function load(keyHash: string): Promise<Lookup> {
    const index = await redis.get(keys.keyIndex(keyHash));
    if (!index) {
      // The sentinel of the index entry's own shard: on a cluster, lost with it.
      const ready = await redis.exists(keys.snapshotSentinel(indexShardOf(keyHash)));
      return { found: false, loading: ready === 0 };
    }
    const [orgId, keyId] = index.split(":").map(Number);
    const pipeline = redis.pipeline();
    pipeline.hmget(keys.keySnapshot(orgId, keyId), "json", "v");
    pipeline.hmget(keys.orgSnapshot(orgId), "json", "v");
    const results = (await pipeline.exec()) ?? [];
    const key = parse<KeySnapshot>((results[0]?.[1] ?? [null, null]) as [string | null, string | null]);
    const org = parse<OrgSnapshot>((results[1]?.[1] ?? [null, null]) as [string | null, string | null]);
    if (!key || !org) return { found: false, loading: true };
    if (byHash.size >= MAX_ENTRIES) clear();
    const resolved = { key, org };
    byHash.set(keyHash, resolved);
    hashesOfKey.set(keyId, keyHash);
    orgs.set(orgId, org);
    return { found: true, snapshot: resolved };
  }

  return {
    /** From memory when possible (no I/O), else from Redis. */
    lookup(keyHash: string): Lookup | Promise<Lookup> {
      const hit = byHash.get(keyHash);
      if (hit) return { found: true, snapshot: hit };
      return load(keyHash);
    },
    /** Forget one key (its versions disagreed with Redis) and load it again. */
    reload(keyHash: string): Promise<Lookup> {
      const hit = byHash.get(keyHash);
      if (hit) {
        dropKey(hit.key.value.id);
        orgs.delete(hit.org.value.id);
      }
      return load(keyHash);
    },
    apply(change: SnapshotChange) {
      if (change.type === "key") dropKey(change.id);
      else if (change.type === "org") dropOrg(change.id);
      else if (change.type === "content") return;
      else clear();
    },
    async subscribe(): Promise<void> {
      const connection = duplicateRedis(redis);
      subscriber = connection;
      // Reconnects are ioredis's job; a missed message costs a reload (see above), never a wrong answer.
      connection.on("error", () => {});
      await connection.subscribe(keys.snapshotChannel());
      connection.on("message", (_channel: string, message: string) => {
        try {
          this.apply(JSON.parse(message) as SnapshotChange);
        } catch {
          clear();
        }
      });
      // Messages sent while disconnected are lost: start from a clean slate on reconnect.
      connection.on("ready", clear);
    },
    close() {
      subscriber?.disconnect();
      clear();
    },
    size: () => byHash.size,
  };
}

export type SnapshotCache = ReturnType<typeof createSnapshotCache>;
