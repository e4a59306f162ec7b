import { describe, expect, it } from "vitest";
import { coalesce } from "../../../actors/runtime/coalesce.js";

/** A task that waits until released, counting its runs and how many overlap. */
function gatedTask() {
  let releaseRun: (() => void) | null = null;
  const state = { runs: 0, active: 0, maxActive: 0 };
  const fn = async () => {
    state.runs++;
    state.active++;
    state.maxActive = Math.max(state.maxActive, state.active);
    await new Promise<void>((resolve) => (releaseRun = resolve));
    state.active--;
  };
  const release = async () => {
    while (releaseRun === null) await new Promise((r) => setImmediate(r));
    const r = releaseRun;
    releaseRun = null;
    r();
  };
  return { fn, state, release };
}

describe("coalesce", () => {
  it("runs once more after the current run however often it was asked meanwhile, never two at once", async () => {
    const { fn, state, release } = gatedTask();
    const task = coalesce(fn);
    const first = task.run();
    for (let i = 0; i < 5; i++) void task.run();
    expect(task.run()).toBe(first);
    await release();
    await release();
    await first;
    expect(state.runs).toBe(2);
    expect(state.maxActive).toBe(1);
    expect(task.current()).toBeNull();
  });

  it("loses no request, whenever it comes during or just after a run (any number of microtasks later)", async () => {
    for (let ticks = 0; ticks < 12; ticks++) {
      let starts = 0;
      const task = coalesce(async () => {
        starts++;
      });
      void task.run();
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      const before = starts;
      void task.run();
      await new Promise((resolve) => setImmediate(resolve));
      expect(starts, `asked ${ticks} microtasks after the first run`).toBeGreaterThan(before);
    }
  });

  it("asked after a run ended, runs again", async () => {
    let runs = 0;
    const task = coalesce(() => {
      runs++;
    });
    await task.run();
    await task.run();
    expect(runs).toBe(2);
  });

  it("starts no further run once stopped; the run in progress finishes", async () => {
    const { fn, state, release } = gatedTask();
    let stopped = false;
    const task = coalesce(fn, () => stopped);
    const first = task.run();
    void task.run();
    stopped = true;
    await release();
    await first;
    expect(state.runs).toBe(1);
  });

  it("a run that throws rejects its promise and the task can run again", async () => {
    let fail = true;
    const task = coalesce(() => {
      if (fail) throw new Error("boom");
    });
    await expect(task.run()).rejects.toThrow("boom");
    fail = false;
    await expect(task.run()).resolves.toBeUndefined();
  });
});
