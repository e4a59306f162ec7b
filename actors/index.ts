import { hostname } from "node:os";
import type { Context } from "../shared/context.js";
import type { Pool } from "../shared/db/pool.js";
import { type Actor, runActor } from "./runtime/index.js";

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
  scanner: async () => (await import("./scanner/job/index.js")).startScanner,
  usage: async () => (await import("./usage/index.js")).startUsage,
};

/** Runs one actor definition with the process's connections; the consumer name is host and pid. */
export async function startActor<T>(ctx: Context, actor: Actor<T, Pool>): Promise<RunningActor> {
  const handle = await runActor(actor, {
    redis: ctx.redis,
    keys: ctx.keys,
    clock: ctx.clock,
    logger: ctx.logger,
    db: ctx.db,
    consumerName: `${hostname()}-${process.pid}`,
  });
  return { stop: async () => void (await handle.stop()) };
}
