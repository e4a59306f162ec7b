/**
 * The runtime's counters. Each runner keeps its own numbers (handle.metrics()) and,
 * when given a prom-client registry, mirrors them into counters labelled by actor,
 * stream and group, plus gauges refreshed from streamStats. Several runners can share
 * one registry: a metric already registered under our name is reused, not re-created
 * (prom-client throws on duplicate names). Names start `gateway_actor_`: the ingress
 * exports the deployment-wide `gateway_stream_*`/`gateway_group_*` gauges itself
 * (ingress/stream-metrics.ts); these are the same numbers as seen by an actor process.
 * Stream labels drop REDIS_PREFIX, like the ingress's.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { StreamStats } from "../../shared/platform/streams/stats.js";

export const COUNTER_KINDS = ["handled", "failed", "retried", "deadLettered", "claimed", "skipped"] as const;
export type CounterKind = (typeof COUNTER_KINDS)[number];
export type StreamCounters = Record<CounterKind, number>;

const HELP: Record<CounterKind, string> = {
  handled: "Messages handled and acked",
  failed: "Handler attempts that threw",
  retried: "Messages redelivered after a failed attempt",
  deadLettered: "Messages moved to the dead-letter stream",
  claimed: "Messages claimed from idle consumers (XAUTOCLAIM)",
  skipped: "Messages acked unhandled because they were addressed to another group",
};

const METRIC_NAME: Record<CounterKind, string> = {
  handled: "gateway_actor_messages_handled_total",
  failed: "gateway_actor_handler_failures_total",
  retried: "gateway_actor_messages_retried_total",
  deadLettered: "gateway_actor_messages_dead_lettered_total",
  claimed: "gateway_actor_messages_claimed_total",
  skipped: "gateway_actor_messages_skipped_total",
};

type CounterLabels = "actor" | "stream" | "group";
type GroupLabels = "stream" | "group";

interface PromMetrics {
  counters: Record<CounterKind, Counter<CounterLabels>>;
  length: Gauge<"stream">;
  deadLetters: Gauge<"stream">;
  pending: Gauge<GroupLabels>;
  lag: Gauge<GroupLabels>;
  oldestPendingAge: Gauge<GroupLabels>;
}

function counter(registry: Registry, name: string, help: string): Counter<CounterLabels> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames: ["actor", "stream", "group"], registers: [registry] });
}

function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

function promMetrics(registry: Registry): PromMetrics {
  const counters = {} as Record<CounterKind, Counter<CounterLabels>>;
  for (const kind of COUNTER_KINDS) counters[kind] = counter(registry, METRIC_NAME[kind], HELP[kind]);
  const byGroup = ["stream", "group"] as const;
  return {
    counters,
    length: gauge(registry, "gateway_actor_stream_length", "Entries in the stream (XLEN)", ["stream"]),
    deadLetters: gauge(registry, "gateway_actor_stream_dead_letters", "Entries in the stream's dead-letter stream", ["stream"]),
    pending: gauge(registry, "gateway_actor_group_pending", "Delivered but unacked entries", byGroup),
    lag: gauge(registry, "gateway_actor_group_lag", "Entries not yet delivered to the group", byGroup),
    oldestPendingAge: gauge(registry, "gateway_actor_group_oldest_pending_age_seconds", "Age of the oldest pending entry", byGroup),
  };
}

export interface RunnerCounters {
  inc(stream: string, kind: CounterKind): void;
  snapshot(stream: string): StreamCounters;
  /** Refresh the gauges (no-op without a registry). */
  record(stats: StreamStats): void;
}

export function createCounters(
  actor: string,
  group: string,
  streams: readonly string[],
  options: { registry?: Registry; prefix?: string } = {},
): RunnerCounters {
  const { registry, prefix = "" } = options;
  const label = (stream: string) => (prefix !== "" && stream.startsWith(prefix) ? stream.slice(prefix.length) : stream);
  const local = new Map<string, StreamCounters>();
  for (const stream of streams) local.set(stream, { handled: 0, failed: 0, retried: 0, deadLettered: 0, claimed: 0, skipped: 0 });
  const prom = registry === undefined ? null : promMetrics(registry);
  // Every series exists from the start at 0, so rate() and alerts see a counter before its first event.
  if (prom !== null)
    for (const stream of streams) for (const kind of COUNTER_KINDS) prom.counters[kind].inc({ actor, stream: label(stream), group }, 0);
  return {
    inc(stream, kind) {
      const counters = local.get(stream);
      if (counters !== undefined) counters[kind] += 1;
      prom?.counters[kind].inc({ actor, stream: label(stream), group });
    },
    snapshot(stream) {
      return { ...(local.get(stream) ?? { handled: 0, failed: 0, retried: 0, deadLettered: 0, claimed: 0, skipped: 0 }) };
    },
    record(stats) {
      if (prom === null) return;
      const stream = label(stats.stream);
      prom.length.set({ stream }, stats.length);
      if (stats.deadLetters !== null) prom.deadLetters.set({ stream }, stats.deadLetters);
      for (const g of stats.groups) {
        const labels = { stream, group: g.group };
        prom.pending.set(labels, g.pending);
        prom.lag.set(labels, g.lag);
        prom.oldestPendingAge.set(labels, (g.oldestPendingAgeMs ?? 0) / 1000);
      }
    },
  };
}
