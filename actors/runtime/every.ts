/**
 * A periodic task on the shared clock, for timer actors (assignment deadlines, scheduled
 * re-scans). It runs on a real interval and also right after the test clock moves, so a
 * test that advances the clock by a day sees the effect without waiting an interval.
 * fn must decide from clock.now(), never from how often it ran. Runs never overlap: a
 * trigger while fn runs schedules exactly one more run after it.
 */
import type { Clock } from "../../shared/platform/clock.js";
import { coalesce } from "./coalesce.js";

export interface EveryOptions {
  /** Run once at start too (default true). */
  immediate?: boolean;
  /**
   * Where a failed run is reported; the timer goes on. Without it the error is rethrown
   * outside the timer (an uncaught exception): a fault must not vanish silently.
   */
  onError?: (error: unknown) => void;
}

export interface Every {
  /** Stop triggering and wait for a run in progress. */
  stop(): Promise<void>;
}

export function every(clock: Clock, intervalMs: number, fn: () => Promise<void> | void, options: EveryOptions = {}): Every {
  let stopped = false;

  const report = (error: unknown) => {
    if (options.onError) options.onError(error);
    else
      setImmediate(() => {
        throw error;
      });
  };
  // A failed run is reported and the loop goes on: a trigger during it still gets its run.
  const task = coalesce(
    async () => {
      try {
        await fn();
      } catch (error) {
        report(error);
      }
    },
    () => stopped,
  );

  const trigger = () => {
    if (!stopped) void task.run();
  };

  const timer = setInterval(trigger, intervalMs);
  const unsubscribe = clock.onMove(trigger);
  if (options.immediate ?? true) trigger();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      await task.current();
    },
  };
}
