import type { Redis } from "../redis/client.js";
import type { Keys } from "../redis/keys.js";

/**
 * Actor heartbeats. A consumer group counts a consumer only once it has read through the
 * group, and several actors wait with XREAD before they join: the group's CONSUMERS figure
 * cannot tell an idle actor from a dead one. Each actor process therefore beats every
 * BEAT_MS: a key with a TTL of ALIVE_MS and its entry in one sorted set (read without
 * scanning the keyspace). `gateway streams` shows the live processes per actor.
 */
export const BEAT_MS = 5_000;
export const ALIVE_MS = 15_000;

export interface LiveActor {
  name: string;
  processes: string[];
  /** The newest beat of any of its processes (ms since the epoch). */
  lastBeatMs: number;
}

/** Beats for one actor process until stopped (wall time: liveness is about the process). */
export function startHeartbeat(redis: Redis, keys: Keys, name: string, processName: string): { stop(): Promise<void> } {
  const member = `${name}:${processName}`;
  const beat = async () => {
    const now = Date.now();
    await redis
      .multi()
      .set(keys.actorAlive(name, processName), String(now), "PX", ALIVE_MS)
      .zadd(keys.actorAliveIndex(), now, member)
      .zremrangebyscore(keys.actorAliveIndex(), "-inf", now - ALIVE_MS)
      .exec();
  };
  const run = () => void beat().catch(() => {});
  const timer = setInterval(run, BEAT_MS);
  timer.unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await redis
        .multi()
        .del(keys.actorAlive(name, processName))
        .zrem(keys.actorAliveIndex(), member)
        .exec()
        .catch(() => {});
    },
  };
}

/** Actors with at least one process that beat within ALIVE_MS, by name. */
export async function liveActors(redis: Redis, keys: Keys, nowMs = Date.now()): Promise<LiveActor[]> {
  const entries = await redis.zrangebyscore(keys.actorAliveIndex(), nowMs - ALIVE_MS, "+inf", "WITHSCORES");
  const byName = new Map<string, LiveActor>();
  for (let i = 0; i < entries.length; i += 2) {
    const member = entries[i];
    const at = Number(entries[i + 1]);
    const split = member.indexOf(":");
    const name = member.slice(0, split);
    const actor = byName.get(name) ?? { name, processes: [], lastBeatMs: 0 };
    actor.processes.push(member.slice(split + 1));
    actor.lastBeatMs = Math.max(actor.lastBeatMs, at);
    byName.set(name, actor);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
