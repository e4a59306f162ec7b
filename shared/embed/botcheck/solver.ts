import { workSearcher } from "../../botcheck/work.js";

/**
 * Solves the hold's proof-of-work (shared/botcheck/work.ts) on the page's main thread, in
 * slices of SLICE_MS with a macrotask between them, so input, animation and the page's own
 * scripts go on (no long task: a slice is well under 50 ms). A worker would need
 * `worker-src` in the site's CSP. It keeps the counter with the most leading zero bits
 * seen, which proves every difficulty up to that many.
 */

export interface Solver {
  /** Settles with a counter of at least `bits` zero bits (bits ≤ the goal it was started with). */
  until(bits: number): Promise<number>;
  /** Stops searching (the grant is sent, or the challenge was replaced). */
  stop(): void;
}

const SLICE_MS = 8;
const STEP = 256;

export function createSolver(nonce: string, goal: number): Solver {
  const bitsOf = workSearcher(nonce);
  let next = 0;
  let best = 0;
  let bestBits = -1;
  let stopped = false;
  const waiting: [number, (counter: number) => void][] = [];
  const settle = () => {
    for (let i = waiting.length - 1; i >= 0; i--) {
      if (bestBits >= waiting[i][0]) waiting.splice(i, 1)[0][1](best);
    }
  };
  const slice = () => {
    if (stopped) return;
    const end = performance.now() + SLICE_MS;
    do {
      for (let i = 0; i < STEP; i++, next++) {
        const bits = bitsOf(next);
        if (bits > bestBits) {
          bestBits = bits;
          best = next;
        }
      }
    } while (bestBits < goal && performance.now() < end);
    settle();
    if (bestBits < goal) setTimeout(slice, 0);
  };
  setTimeout(slice, 0);
  return {
    until: (bits) =>
      new Promise((resolve) => {
        waiting.push([bits, resolve]);
        settle();
      }),
    stop() {
      stopped = true;
    },
  };
}
