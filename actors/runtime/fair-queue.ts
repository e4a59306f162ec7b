/**
 * The runner's run queue: at most `concurrency` tasks at once and at most `perKey` of one
 * key; a freed slot goes to the waiting task whose key was served longest ago (never
 * served first, then in order of arrival) among keys under their limit: round robin over
 * keys. So one key's long tasks, however many, never hold every slot while another key
 * waits. With every task under one key and `perKey = concurrency` it is a plain FIFO
 * queue with a limit.
 */

export interface FairQueue {
  /** `run` handles its own errors (a rejection is ignored); `drop` is called instead if the task is dropped before it starts. */
  add(key: string, run: () => Promise<void>, drop: () => void): void;
  /** Drops every task not started yet (each one's `drop` is called); returns how many. */
  dropWaiting(): number;
  /** Resolves when nothing runs and nothing waits. */
  onIdle(): Promise<void>;
}

interface Task {
  readonly run: () => Promise<void>;
  readonly drop: () => void;
}

export function createFairQueue(concurrency: number, perKey: number): FairQueue {
  // Keys in order of their first waiting task; the tasks of a key in order of arrival.
  const waiting = new Map<string, Task[]>();
  const running = new Map<string, number>();
  /** When each key with a task waiting or running was last served (a count of starts); forgotten once it has neither. */
  const served = new Map<string, number>();
  let starts = 0;
  let runningTotal = 0;
  let idleWaiters: (() => void)[] = [];

  const settleIdle = () => {
    if (runningTotal > 0 || waiting.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  const next = (): [string, Task] | null => {
    let pick: string | null = null;
    for (const key of waiting.keys()) {
      if ((running.get(key) ?? 0) >= perKey) continue;
      if (pick === null || (served.get(key) ?? -1) < (served.get(pick) ?? -1)) pick = key;
    }
    if (pick === null) return null;
    const tasks = waiting.get(pick) as Task[];
    const task = tasks.shift() as Task;
    if (tasks.length === 0) waiting.delete(pick);
    return [pick, task];
  };

  const pump = () => {
    while (runningTotal < concurrency) {
      const picked = next();
      if (picked === null) break;
      const [key, task] = picked;
      runningTotal++;
      running.set(key, (running.get(key) ?? 0) + 1);
      served.set(key, starts++);
      const done = () => {
        runningTotal--;
        const left = (running.get(key) ?? 1) - 1;
        if (left > 0) running.set(key, left);
        else {
          running.delete(key);
          if (!waiting.has(key)) served.delete(key);
        }
        pump();
        settleIdle();
      };
      // Started from a microtask, never inside add(): the caller's own bookkeeping comes first.
      void Promise.resolve().then(task.run).then(done, done);
    }
  };

  return {
    add(key, run, drop) {
      const tasks = waiting.get(key);
      if (tasks) tasks.push({ run, drop });
      else waiting.set(key, [{ run, drop }]);
      pump();
    },
    dropWaiting() {
      const dropped = [...waiting.values()].flat();
      waiting.clear();
      for (const key of served.keys()) if (!running.has(key)) served.delete(key);
      for (const task of dropped) task.drop();
      settleIdle();
      return dropped.length;
    },
    onIdle() {
      if (runningTotal === 0 && waiting.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
