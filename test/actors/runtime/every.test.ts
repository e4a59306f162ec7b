import { describe, expect, it } from "vitest";
import { every } from "../../../actors/runtime/index.js";
import { manualClock } from "../../../shared/platform/clock.js";
import { gate, waitFor } from "./support.js";

describe("every", () => {
  it("runs at start and again when the clock moves", async () => {
    const clock = manualClock(1_000_000);
    const seen: number[] = [];
    const timer = every(clock, 3_600_000, () => {
      seen.push(clock.now());
    });
    await waitFor(() => seen.length === 1, "the first run");
    clock.advance(86_400_000);
    await waitFor(() => seen.length === 2, "the run after the move");
    expect(seen).toEqual([1_000_000, 87_400_000]);
    await timer.stop();
    clock.advance(1);
    expect(seen.length).toBe(2);
  });

  it("runs on its interval too", async () => {
    const clock = manualClock(0);
    let runs = 0;
    const timer = every(
      clock,
      20,
      () => {
        runs += 1;
      },
      { immediate: false },
    );
    await waitFor(() => runs >= 3, "three interval runs");
    await timer.stop();
  });

  it("never overlaps: triggers during a run add exactly one more run", async () => {
    const clock = manualClock(0);
    const release = gate();
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const timer = every(clock, 3_600_000, async () => {
      runs += 1;
      concurrent += 1;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      if (runs === 1) await release.promise;
      concurrent -= 1;
    });
    await waitFor(() => runs === 1, "the first run");
    clock.advance(1);
    clock.advance(1);
    clock.advance(1);
    release.open();
    await waitFor(() => runs === 2, "the coalesced run");
    await timer.stop();
    expect(runs).toBe(2);
    expect(maxConcurrent).toBe(1);
  });

  it("reports errors and keeps going", async () => {
    const clock = manualClock(0);
    const errors: unknown[] = [];
    let runs = 0;
    const timer = every(
      clock,
      3_600_000,
      () => {
        runs += 1;
        if (runs === 1) throw new Error("boom");
      },
      { onError: (error) => errors.push(error) },
    );
    await waitFor(() => errors.length === 1, "the error");
    clock.advance(1);
    await waitFor(() => runs === 2, "the next run");
    await timer.stop();
    expect((errors[0] as Error).message).toBe("boom");
  });
});
