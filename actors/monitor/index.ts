import type { Context } from "../../shared/platform/context.js";
import { every } from "../runtime/every.js";
import type { RunningActor } from "../index.js";
import { monitorScheduleKey, runMonitor } from "./handler.js";

/** How often the monitor looks for due domains (it also looks right after the test clock moves). */
export const MONITOR_TICK_MS = 60_000;

/**
 * The monitor: re-scans every verified domain once per MONITOR_INTERVAL_HOURS through
 * the scanner actor, spread over the period. Its jobs go straight to the scan stream, so
 * they never spend an organization's 10-per-hour budget of interactive scans (that
 * budget belongs to scan.php). Any number can run side by side (rows are claimed).
 */
export async function startMonitor(ctx: Context, tickMs = MONITOR_TICK_MS): Promise<RunningActor> {
  const periodMs = ctx.config.monitorIntervalHours * 3_600_000;
  const scheduleKey = monitorScheduleKey(ctx.masterSecret);
  const timer = every(
    ctx.clock,
    tickMs,
    async () => {
      await runMonitor({ db: ctx.db, redis: ctx.redis, keys: ctx.keys, nowMs: ctx.clock.now(), periodMs, scheduleKey });
    },
    { onError: (error) => ctx.logger.warn({ err: error }, "monitor run failed; next run retries") },
  );
  return { stop: () => timer.stop() };
}
