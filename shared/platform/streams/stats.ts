/**
 * Per-stream, per-group numbers read from Redis: what /metrics and `ops streams` show.
 * They describe the group across all its consumers and processes, unlike the handle's
 * counters, which are this process's.
 */
import type { Redis } from "../redis/client.js";
import type { Keys } from "../redis/keys.js";
import { idTimestamp, integer, isNoSuchKeyError, parsePendingEntries, parsePendingSummary, record, text } from "./redis-replies.js";

export interface GroupStats {
  group: string;
  consumers: number;
  /** Delivered, not yet acked. */
  pending: number;
  /** Entries not yet delivered to the group. */
  lag: number;
  /** False when `lag` was counted by the fallback and hit its cap (a lower bound). */
  lagExact: boolean;
  lastDeliveredId: string;
  oldestPendingId: string | null;
  /** Since the oldest pending entry was added (Redis server time). */
  oldestPendingAgeMs: number | null;
  /** Since the oldest pending entry was last delivered or touched by its consumer. */
  oldestPendingIdleMs: number | null;
}

export interface StreamStats {
  stream: string;
  length: number;
  /** Entries in the dead-letter stream; null when no key builder was given. */
  deadLetters: number | null;
  groups: GroupStats[];
}

/** Beyond this many undelivered entries the fallback lag count stops (reported inexact). */
export const LAG_SCAN_CAP = 10_000;

async function infoGroups(redis: Redis, stream: string): Promise<Record<string, unknown>[]> {
  try {
    const reply: unknown = await redis.xinfo("GROUPS", stream);
    return Array.isArray(reply) ? reply.map(record) : [];
  } catch (error) {
    if (isNoSuchKeyError(error)) return [];
    throw error;
  }
}

/**
 * Redis 7 reports `lag`, but null when it cannot know it (entries deleted after the
 * last delivered one); Redis 6.2 has no field at all. Then count the entries after the
 * last delivered id, up to a cap: a big lag only needs to be known to be big.
 */
async function lagOf(redis: Redis, stream: string, info: Record<string, unknown>): Promise<{ lag: number; exact: boolean }> {
  const reported = info.lag;
  if (reported !== null && reported !== undefined) return { lag: integer(reported), exact: true };
  const last = text(info["last-delivered-id"]);
  const start = last === "0-0" ? "-" : `(${last}`;
  const entries: unknown = await redis.xrange(stream, start, "+", "COUNT", LAG_SCAN_CAP);
  const lag = Array.isArray(entries) ? entries.length : 0;
  return { lag, exact: lag < LAG_SCAN_CAP };
}

async function pendingOf(
  redis: Redis,
  stream: string,
  group: string,
  serverNowMs: number,
): Promise<Pick<GroupStats, "oldestPendingId" | "oldestPendingAgeMs" | "oldestPendingIdleMs">> {
  const summary = parsePendingSummary(await redis.xpending(stream, group));
  if (summary.count === 0 || summary.minId === null) {
    return { oldestPendingId: null, oldestPendingAgeMs: null, oldestPendingIdleMs: null };
  }
  const [oldest] = parsePendingEntries(await redis.xpending(stream, group, summary.minId, summary.minId, 1));
  return {
    oldestPendingId: summary.minId,
    oldestPendingAgeMs: Math.max(0, serverNowMs - idTimestamp(summary.minId)),
    oldestPendingIdleMs: oldest === undefined ? null : oldest.idleMs,
  };
}

/**
 * Length, dead letters and, per group: consumers, pending, lag, oldest pending.
 * Ages use Redis TIME, not the shared clock: stream ids and idle times are Redis server
 * time, and the test clock's offset would only distort them.
 */
export async function streamStats(redis: Redis, stream: string, keys?: Keys): Promise<StreamStats> {
  const [length, infos, time, deadLetters] = await Promise.all([
    redis.xlen(stream),
    infoGroups(redis, stream),
    redis.time(),
    keys === undefined ? Promise.resolve(null) : redis.xlen(keys.deadLetters(stream)),
  ]);
  const serverNowMs = integer(time[0]) * 1000 + Math.floor(integer(time[1]) / 1000);
  const groups = await Promise.all(
    infos.map(async (info): Promise<GroupStats> => {
      const group = text(info.name);
      const [{ lag, exact }, pending] = await Promise.all([lagOf(redis, stream, info), pendingOf(redis, stream, group, serverNowMs)]);
      return {
        group,
        consumers: integer(info.consumers),
        pending: integer(info.pending),
        lag,
        lagExact: exact,
        lastDeliveredId: text(info["last-delivered-id"]),
        ...pending,
      };
    }),
  );
  return { stream, length, deadLetters, groups };
}
