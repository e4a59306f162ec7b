import type { Context } from "../../../shared/platform/context.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import { startActor, type RunningActor } from "../../index.js";
import { defineActor } from "../../runtime/index.js";
import type { Evaluator } from "../evaluate.js";
import { createCheckPool } from "../offload/pool.js";
import { scanOptionsOf, type ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { recheck, runScan } from "../scan.js";
import type { RunRecheck } from "./recheck.js";
import { scanHandler, type RunScan } from "./handler.js";
import { SCAN_STREAM, scanJobSchema, type ScanJob } from "../../../shared/scans/index.js";

/** Worker threads per scanner process that run the checks (offload/pool.ts). */
export const CHECK_WORKERS = 4;
/**
 * Time the checks of one scan may take in a worker. They take tens of milliseconds on the
 * largest page examined (records/html.ts `HTML_LIMIT`); past this, the scan fails with
 * `scan_failed` rather than hold a worker.
 */
export const CHECK_BUDGET_MS = 5_000;

/** One finding's check, through the same retrieval, SSRF guard and time-outs as a scan. */
export const recheckWith =
  (evaluator: Evaluator): RunRecheck =>
  async (domain, findingKey, options, nowMs) => {
    const result = await recheck(domain, findingKey, options, nowMs, { evaluator });
    return result.ok ? result.finding : null;
  };

/** Scans per process at once. */
export const SCANS_AT_ONCE = 8;
/** Scans of one organization per process at once: half the slots, so the other half stays open to other organizations (in turns). */
export const SCANS_PER_ORG = 4;
/** Jobs held beyond SCANS_AT_ONCE, so another organization's job behind one organization's run of jobs is read. */
export const SCAN_BACKLOG = 56;

/**
 * The scanner: several scans at once per process (they wait on the network, not the
 * CPU; the checks run on `evaluator`, the worker pool in production), any number of
 * processes, organizations served in turn (`fairness`). Scans are not retried on their
 * own: the requester has a deadline, and a re-run would only repeat outbound traffic.
 */
export const scannerActor = (options: ScanOptions, evaluator: Evaluator) => {
  const scan: RunScan = (domain, scanOptions, nowMs) => runScan(domain, scanOptions, nowMs, { evaluator });
  return defineActor<ScanJob, Pool>({
    name: "scanner",
    streams: SCAN_STREAM,
    schema: scanJobSchema,
    handler: scanHandler(scan, options, recheckWith(evaluator)),
    concurrency: SCANS_AT_ONCE,
    fairness: { key: (job) => String(job.org_id), perKey: SCANS_PER_ORG, backlog: SCAN_BACKLOG },
    maxAttempts: 2,
    backoffBaseMs: 500,
    claimIdleMs: 60_000,
    replyTtlSeconds: 60,
  });
};

export async function startScanner(ctx: Context): Promise<RunningActor> {
  const pool = createCheckPool({ size: CHECK_WORKERS, budgetMs: CHECK_BUDGET_MS });
  let running: RunningActor;
  try {
    running = await startActor(ctx, scannerActor(scanOptionsOf(ctx.config), pool));
  } catch (error) {
    await pool.close();
    throw error;
  }
  return {
    stop: async () => {
      await running.stop();
      await pool.close();
    },
  };
}
