import type { Context } from "../../shared/platform/context.js";
import { every } from "../runtime/every.js";
import type { RunningActor } from "../index.js";
import { runTimers } from "./handler.js";
import { TIMER_INTERVAL_MS } from "./thresholds.js";

/**
 * The assignment-timer: a periodic task on the shared clock (it runs on an interval and
 * right after the test clock moves). Any number can run side by side: each crossing is
 * claimed by a conditional UPDATE in the transaction that writes its event.
 */
export async function startAssignmentTimer(ctx: Context, intervalMs = TIMER_INTERVAL_MS): Promise<RunningActor> {
  const timer = every(
    ctx.clock,
    intervalMs,
    async () => {
      await runTimers({ db: ctx.db, nowMs: ctx.clock.now() });
    },
    { onError: (error) => ctx.logger.warn({ err: error }, "assignment timer run failed; next run retries") },
  );
  return { stop: () => timer.stop() };
}
