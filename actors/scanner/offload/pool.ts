/**
 * The scanner's checks, run in a few worker threads with a time budget each. The actor's
 * event loop carries every scan's network I/O, the heartbeat that keeps its claims on
 * messages, and the replies the ingress waits for: a check that took seconds of CPU on a
 * hostile page would stop them all, for every organization. In a worker it stops only
 * that worker, and past its budget the worker is ended (`terminate` interrupts even a
 * loop that never yields) and the evaluation rejected with `CheckBudgetExceeded`.
 *
 * Workers are made when first needed, kept between evaluations and replaced after a
 * budget is exceeded or a worker dies. Evaluations beyond `size` wait in order; the budget
 * starts when one is handed to a worker.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { sourcePath } from "../../../shared/platform/paths.js";
import type { EvaluationTask, Evaluator, Sections } from "../evaluate.js";
import type { Finding } from "../finding.js";

export type WorkerAnswer = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export class CheckBudgetExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`the scan's checks did not finish within ${budgetMs} ms`);
    this.name = "CheckBudgetExceeded";
  }
}

export interface CheckPoolOptions {
  /** Worker threads at most. */
  readonly size: number;
  /** Time one evaluation may take once handed to a worker. */
  readonly budgetMs: number;
  /** The compiled worker entry; by default offload/worker.js. */
  readonly workerFile?: string;
}

export interface CheckPool extends Evaluator {
  /** Ends every worker; evaluations not finished are rejected. */
  close(): Promise<void>;
}

/**
 * A worker thread runs JavaScript, not the TypeScript vitest runs from: from the source
 * tree the compiled file under dist/ is used (`npm run build` makes it, as it does for the
 * tests that start `dist/ops/start.js`).
 */
export function compiledWorkerFile(): string {
  const beside = fileURLToPath(new URL("./worker.js", import.meta.url));
  if (existsSync(beside)) return beside;
  const built = sourcePath("dist", "actors", "scanner", "offload", "worker.js");
  if (existsSync(built)) return built;
  throw new Error(`the scanner's check worker ${built} does not exist: run npm run build`);
}

interface Job {
  readonly task: EvaluationTask;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | undefined;
}

export function createCheckPool(options: CheckPoolOptions): CheckPool {
  if (!Number.isInteger(options.size) || options.size < 1) throw new Error("check pool size must be a positive integer");
  const file = options.workerFile ?? compiledWorkerFile();
  const slots = new Set<Slot>();
  const idle: Slot[] = [];
  const waiting: Job[] = [];
  let closed = false;

  /** Ends a worker (budget exceeded, crashed, or closing) and rejects what it was doing. */
  const retire = async (slot: Slot, error: Error): Promise<void> => {
    if (!slots.delete(slot)) return;
    clearTimeout(slot.timer);
    const at = idle.indexOf(slot);
    if (at !== -1) idle.splice(at, 1);
    const job = slot.job;
    slot.job = null;
    const ended = slot.worker.terminate();
    job?.reject(error);
    dispatch();
    await ended;
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(file), job: null, timer: undefined };
    // An idle worker must not keep a process alive that has nothing else to do.
    slot.worker.unref();
    slot.worker.on("message", (answer: WorkerAnswer) => {
      // An answer that crossed the budget's end: the worker is already retired.
      if (!slots.has(slot)) return;
      const job = slot.job;
      clearTimeout(slot.timer);
      slot.job = null;
      idle.push(slot);
      if (job) {
        if (answer.ok) job.resolve(answer.value);
        else job.reject(new Error(`check worker: ${answer.error}`));
      }
      dispatch();
    });
    slot.worker.on("error", (error) => void retire(slot, error));
    slot.worker.on("exit", (code) => void retire(slot, new Error(`check worker exited with code ${code}`)));
    slots.add(slot);
    return slot;
  };

  function dispatch(): void {
    while (!closed && waiting.length > 0) {
      const slot = idle.pop() ?? (slots.size < options.size ? spawn() : null);
      if (slot === null) return;
      const job = waiting.shift() as Job;
      slot.job = job;
      slot.timer = setTimeout(() => void retire(slot, new CheckBudgetExceeded(options.budgetMs)), options.budgetMs);
      slot.worker.postMessage(job.task);
    }
  }

  const run = (task: EvaluationTask): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error("the check pool is closed"));
      waiting.push({ task, resolve, reject });
      dispatch();
    });

  return {
    sections: async (dns, web) => (await run({ kind: "sections", dns, web })) as Sections,
    check: async (findingId, target) => (await run({ kind: "check", findingId, target })) as Finding,
    async close() {
      closed = true;
      for (const job of waiting.splice(0)) job.reject(new Error("the check pool is closed"));
      await Promise.all([...slots].map((slot) => retire(slot, new Error("the check pool is closed"))));
    },
  };
}
