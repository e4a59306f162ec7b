import { hostname } from "node:os";
import type { Context } from "../shared/platform/context.js";
import type { Pool } from "../shared/platform/db/pool.js";
import { actorRegistry, publishActorMetrics } from "../shared/platform/metrics/actors.js";
import { type Actor, claimTiming, runActor } from "./runtime/index.js";

/** A running actor process part: stopped (drained) on shutdown. */
export interface RunningActor {
  stop(): Promise<void>;
}

export type ActorStarter = (ctx: Context) => Promise<RunningActor>;

/**
 * Every actor the supervisor runs, by role name. Each can also run alone:
 * `node dist/ops/start.js actor <name>`. Loaded lazily so one role's process does not
 * import the others' dependencies.
 */
export const ACTORS: Record<string, () => Promise<ActorStarter>> = {
  "assignment-timer": async () => (await import("./assignment-timer/index.js")).startAssignmentTimer,
  monitor: async () => (await import("./monitor/index.js")).startMonitor,
  notifier: async () => (await import("./notifier/index.js")).startNotifier,
  outbox: async () => (await import("./outbox/index.js")).startOutboxRelay,
  siem: async () => (await import("./siem/index.js")).startSiem,
  scanner: async () => (await import("./scanner/job/index.js")).startScanner,
  usage: async () => (await import("./usage/index.js")).startUsage,
  prober: async () => (await import("./prober/index.js")).startProber,
};

/** Runs one actor definition with the process's connections; the consumer name is host and pid. */
export async function startActor<T>(ctx: Context, definition: Actor<T, Pool>): Promise<RunningActor> {
  const actor = withClaimIdle(definition, ctx.config.actorClaimIdleMs);
  const consumerName = `${hostname()}-${process.pid}`;
  const processName = `${actor.name}-${consumerName}`;
  const registry = actorRegistry(`actor:${actor.name}`, processName);
  const handle = await runActor(actor, {
    redis: ctx.redis,
    keys: ctx.keys,
    clock: ctx.clock,
    logger: ctx.logger,
    db: ctx.db,
    consumerName,
    registry,
  });
  const publishing = publishActorMetrics(ctx.redis, ctx.keys, processName, registry);
  return {
    stop: async () => {
      await handle.stop();
      await publishing.stop();
    },
  };
}

/** ACTOR_CLAIM_IDLE_MS, when set, for one actor (runtime `claimTiming`). */
export function withClaimIdle<T>(actor: Actor<T, Pool>, claimIdleMs: number | null): Actor<T, Pool> {
  if (claimIdleMs === null) return actor;
  return Object.freeze({ ...actor, ...claimTiming(claimIdleMs, actor.claimIntervalMs) });
}
