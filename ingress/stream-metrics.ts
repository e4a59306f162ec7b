import type { Redis } from "../shared/platform/redis/client.js";
import { Gauge, type Registry } from "prom-client";
import { registeredStreams } from "../shared/platform/streams/registry.js";
import { streamStats, type StreamStats } from "../shared/platform/streams/stats.js";
import type { Keys } from "../shared/platform/redis/keys.js";

/** Every stream of this deployment, from the stream registry (no keyspace scan); dead-letter streams are reported with their stream. */
export function listStreams(redis: Redis, keys: Keys): Promise<string[]> {
  return registeredStreams(redis, keys);
}

/**
 * Stream and consumer-group gauges, read from Redis at scrape time so they describe the
 * whole deployment (every process of every actor), not this ingress. prom-client runs
 * every collect of a scrape concurrently, so they share one read per scrape.
 */
export function registerStreamMetrics(registry: Registry, redis: Redis, keys: Keys): void {
  let current: { at: number; stats: Promise<StreamStats[]> } | null = null;
  const read = (): Promise<StreamStats[]> => {
    if (current && Date.now() - current.at < 500) return current.stats;
    const stats = listStreams(redis, keys).then((streams) => Promise.all(streams.map((s) => streamStats(redis, s, keys))));
    current = { at: Date.now(), stats };
    return stats;
  };
  const label = (stream: string) => stream.slice(keys.prefix.length);
  const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, all: StreamStats[]) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const all = await read();
        this.reset();
        fill(this, all);
      },
    });
  const perGroup = (value: (g: StreamStats["groups"][number]) => number) => (g: Gauge, all: StreamStats[]) => {
    for (const s of all) for (const group of s.groups) g.set({ stream: label(s.stream), group: group.group }, value(group));
  };
  gauge("gateway_stream_length", "Entries in the stream", ["stream"], (g, all) => {
    for (const s of all) g.set({ stream: label(s.stream) }, s.length);
  });
  gauge("gateway_stream_dead_letters", "Entries in the stream's dead-letter stream", ["stream"], (g, all) => {
    for (const s of all) g.set({ stream: label(s.stream) }, s.deadLetters ?? 0);
  });
  gauge(
    "gateway_group_consumers",
    "Consumers registered in the group (0 with work waiting: the role is not running)",
    ["stream", "group"],
    perGroup((x) => x.consumers),
  );
  gauge(
    "gateway_group_pending",
    "Delivered, unacknowledged entries",
    ["stream", "group"],
    perGroup((x) => x.pending),
  );
  gauge(
    "gateway_group_lag",
    "Entries not yet delivered to the group",
    ["stream", "group"],
    perGroup((x) => x.lag),
  );
  gauge(
    "gateway_group_oldest_pending_age_seconds",
    "Age of the oldest pending entry",
    ["stream", "group"],
    perGroup((x) => (x.oldestPendingAgeMs ?? 0) / 1000),
  );
}
