import type { Redis } from "../../shared/platform/redis/client.js";
import { type LiveActor, liveActors } from "../../shared/platform/streams/alive.js";
import { type StreamStats, streamStats } from "../../shared/platform/streams/stats.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { count, duration, table } from "./format.js";
import { type CliIo, EXIT, print, printJson } from "./io.js";
import { knownStreams, shortName, sourceStreams } from "./redis-scan.js";

/**
 * `gateway streams`: every stream under the prefix and each consumer group's length,
 * pending, lag and oldest pending age (XINFO GROUPS, XPENDING), then the actor processes
 * alive by their heartbeats (shared/platform/streams/alive.ts: a group's CONSUMERS stays 0 for an
 * actor waiting before its first read); `--watch` refreshes every two seconds until Ctrl-C.
 */
export const WATCH_INTERVAL_MS = 2000;

export async function collectStreams(redis: Redis, keys: Keys): Promise<StreamStats[]> {
  const streams = sourceStreams(keys, await knownStreams(redis, keys));
  return Promise.all(streams.map((stream) => streamStats(redis, stream, keys)));
}

function asJson(stats: StreamStats[], actors: LiveActor[], keys: Keys, atMs: number) {
  return {
    ok: true,
    prefix: keys.prefix,
    at: new Date(atMs).toISOString(),
    streams: stats.map((s) => ({
      stream: s.stream,
      length: s.length,
      dead_letters: s.deadLetters,
      groups: s.groups.map((g) => ({
        group: g.group,
        consumers: g.consumers,
        pending: g.pending,
        lag: g.lag,
        lag_exact: g.lagExact,
        last_delivered_id: g.lastDeliveredId,
        oldest_pending_id: g.oldestPendingId,
        oldest_pending_age_ms: g.oldestPendingAgeMs,
        oldest_pending_idle_ms: g.oldestPendingIdleMs,
      })),
    })),
    actors: actors.map((a) => ({ actor: a.name, processes: a.processes, last_beat_at: new Date(a.lastBeatMs).toISOString() })),
  };
}

function asTable(stats: StreamStats[], keys: Keys): string {
  if (stats.length === 0) return `No streams under prefix ${JSON.stringify(keys.prefix)}.`;
  const rows: string[][] = [];
  for (const s of stats) {
    const name = shortName(keys, s.stream);
    const dead = count(s.deadLetters);
    if (s.groups.length === 0) rows.push([name, count(s.length), dead, "-", "-", "-", "-", "-"]);
    for (const g of s.groups) {
      rows.push([
        name,
        count(s.length),
        dead,
        g.group,
        count(g.consumers),
        count(g.pending),
        `${count(g.lag)}${g.lagExact ? "" : "+"}`,
        duration(g.oldestPendingAgeMs),
      ]);
    }
  }
  return table(["STREAM", "LENGTH", "DEAD", "GROUP", "CONSUMERS", "PENDING", "LAG", "OLDEST PENDING"], rows);
}

function actorsTable(actors: LiveActor[], nowMs: number): string {
  if (actors.length === 0) return "No actor process alive (no heartbeat in the last 15 s).";
  const rows = actors.map((a) => [a.name, count(a.processes.length), `${duration(Math.max(0, nowMs - a.lastBeatMs))} ago`]);
  return table(["ACTOR", "ALIVE", "LAST BEAT"], rows);
}

/** Resolves true after `ms`, false at once when the signal aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export async function streamsCommand(options: { redis: Redis; keys: Keys; io: CliIo; json: boolean; watch: boolean }): Promise<number> {
  const { redis, keys, io, json, watch } = options;
  for (;;) {
    const [stats, actors] = await Promise.all([collectStreams(redis, keys), liveActors(redis, keys)]);
    const now = Date.now();
    if (json) {
      printJson(io, asJson(stats, actors, keys, now));
    } else {
      if (watch && io.stdout.isTTY) io.stdout.write("\x1b[H\x1b[2J");
      if (watch)
        print(
          io,
          `Every ${WATCH_INTERVAL_MS / 1000}s, ${new Date(now).toISOString()}, prefix ${JSON.stringify(keys.prefix)} (Ctrl-C stops)\n`,
        );
      print(io, asTable(stats, keys));
      print(io, `\n${actorsTable(actors, now)}`);
    }
    if (!watch || !(await pause(WATCH_INTERVAL_MS, io.signal))) return EXIT.ok;
  }
}
