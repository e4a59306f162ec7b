import type { Redis } from "../redis/client.js";
import { AggregatorRegistry, collectDefaultMetrics, Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import type { Keys } from "../redis/keys.js";

/**
 * Actor processes serve no HTTP, so their metrics (messages handled, failed, retried,
 * dead-lettered, claimed; process memory and CPU) reach Prometheus through Redis: each
 * process publishes its registry as JSON every PUBLISH_MS under its consumer name, listed in
 * one sorted set by publish time (no keyspace scan), and the ingress's /metrics merges the
 * fresh ones into its own answer. Series carry `role` and `process` labels, so processes
 * never add up by accident; a process that stopped publishing drops out after STALE_MS.
 */

export const PUBLISH_MS = 10_000;
export const STALE_MS = 60_000;

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** The registry an actor process registers its metrics in, with default process metrics. */
export function actorRegistry(role: string, processName: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role, process: processName });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Publishes `registry` every PUBLISH_MS (wall time: metrics are about the process, not the service clock). */
export function publishActorMetrics(redis: Redis, keys: Keys, processName: string, registry: Registry): { stop(): Promise<void> } {
  const publish = async () => {
    const json = JSON.stringify(await registry.getMetricsAsJSON());
    const now = Date.now();
    await redis
      .multi()
      .set(keys.actorMetrics(processName), json, "PX", STALE_MS)
      .zadd(keys.actorMetricsIndex(), now, processName)
      .zremrangebyscore(keys.actorMetricsIndex(), "-inf", now - STALE_MS)
      .exec();
  };
  const run = () => void publish().catch(() => {});
  const timer = setInterval(run, PUBLISH_MS);
  timer.unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await redis
        .multi()
        .del(keys.actorMetrics(processName))
        .zrem(keys.actorMetricsIndex(), processName)
        .exec()
        .catch(() => {});
    },
  };
}

/** The published registries of every live actor process. */
export async function readActorMetrics(redis: Redis, keys: Keys): Promise<MetricsJson[]> {
  const names = await redis.zrangebyscore(keys.actorMetricsIndex(), Date.now() - STALE_MS, "+inf");
  if (names.length === 0) return [];
  const values = await redis.mget(...names.map((name) => keys.actorMetrics(name)));
  const out: MetricsJson[] = [];
  for (const value of values) {
    if (value === null) continue;
    try {
      out.push(JSON.parse(value) as MetricsJson);
    } catch {
      /* a torn value: skip this process until its next publish */
    }
  }
  return out;
}

/** This process's registry merged with every live actor process's, as Prometheus text. */
export async function deploymentMetrics(own: Registry, redis: Redis, keys: Keys): Promise<string> {
  const actors = await readActorMetrics(redis, keys).catch(() => []);
  if (actors.length === 0) return own.metrics();
  const merged = AggregatorRegistry.aggregate([await own.getMetricsAsJSON(), ...actors] as Parameters<
    typeof AggregatorRegistry.aggregate
  >[0]);
  return merged.metrics();
}
