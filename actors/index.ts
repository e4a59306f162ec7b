import type { Context } from "../shared/context.js";

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
