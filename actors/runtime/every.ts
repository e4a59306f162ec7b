/**
 * A periodic task on the shared clock, for timer actors (assignment deadlines, scheduled
 * re-scans). It runs on a real interval and also right after the test clock moves, so a
 * test that advances the clock by a day sees the effect without waiting an interval.
 * fn must decide from clock.now(), never from how often it ran. Runs never overlap: a
 * trigger while fn runs schedules exactly one more run after it.
 */
import type { Clock } from "../../shared/clock.js";

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
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const report = (error: unknown) => {
    if (options.onError) options.onError(error);
    else
      setImmediate(() => {
        throw error;
      });
  };

  const trigger = () => {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    const run = async () => {
      do {
        again = false;
        try {
          await fn();
        } catch (error) {
          report(error);
        }
      } while (again && !stopped);
    };
    // Cleared in .finally, which always runs later: a run that completes synchronously
    // must not clear `running` before it was assigned.
    running = run().finally(() => {
      running = null;
    });
  };

  const timer = setInterval(trigger, intervalMs);
  const unsubscribe = clock.onMove(trigger);
  if (options.immediate ?? true) trigger();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      await running;
    },
  };
}
