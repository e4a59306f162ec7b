/**
 * Entry of the scanner's check workers (pool.ts): one task at a time, answered with its
 * result or its error. Started by the pool from the compiled file only.
 */
import { parentPort } from "node:worker_threads";
import { evaluateTask, type EvaluationTask } from "../evaluate.js";
import type { WorkerAnswer } from "./pool.js";

parentPort?.on("message", (task: EvaluationTask) => {
  let answer: WorkerAnswer;
  try {
    answer = { ok: true, value: evaluateTask(task) };
  } catch (error) {
    answer = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(answer);
});
