/**
 * A task whose runs never overlap: asked to run while it runs, it runs exactly once more
 * after the current run, however many times it was asked meanwhile (a burst of triggers
 * costs one run, and nothing asked for during a run is missed). A run that throws ends the
 * loop; its promise rejects (callers that must go on catch inside `fn`).
 */
export interface Coalesced {
  /** Runs now, or once more after the run in progress; resolves when no run is left. */
  run(): Promise<void>;
  /** The run in progress, if any (to wait for it when stopping). */
  current(): Promise<void> | null;
}

/** `stopped`: once true, no further run starts (the one in progress finishes). */
export function coalesce(fn: () => Promise<unknown> | unknown, stopped: () => boolean = () => false): Coalesced {
  let running: Promise<void> | null = null;
  let again = false;
  return {
    run() {
      if (running !== null) {
        again = true;
        return running;
      }
      // `running` is cleared in the same turn as the loop's last `again` check: a request that
      // came after that check finds no run and starts one (cleared in a later .finally, it
      // would find the finished run and be lost).
      let finished = false;
      let started: Promise<void> | undefined;
      const loop = async () => {
        try {
          do {
            again = false;
            await fn();
          } while (again && !stopped());
        } finally {
          finished = true;
          if (running === started) running = null;
        }
      };
      started = loop();
      // A first run that threw before its first await has finished already.
      if (!finished) running = started;
      return started;
    },
    current: () => running,
  };
}
