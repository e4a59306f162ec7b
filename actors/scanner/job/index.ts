import type { Context } from "../../../shared/platform/context.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import { startActor, type RunningActor } from "../../index.js";
import { defineActor } from "../../runtime/index.js";
import { scanOptionsOf, type ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { recheck, runScan } from "../scan.js";
import type { RunRecheck } from "./recheck.js";
import { scanHandler } from "./handler.js";
import { SCAN_STREAM, scanJobSchema, type ScanJob } from "../../../shared/scans/index.js";

/** Moved to shared/platform/net/outbound/options.ts (the prober builds on it too); kept here for callers of the scanner. */
export { scanOptionsOf };

/** One finding's check, through the same retrieval, SSRF guard and time-outs as a scan. */
export const runRecheck: RunRecheck = async (domain, findingKey, options, nowMs) => {
  const result = await recheck(domain, findingKey, options, nowMs);
  return result.ok ? result.finding : null;
};

/**
 * The scanner: several scans at once per process (they wait on the network, not the
 * CPU), any number of processes. Scans are not retried on their own: the requester has
 * a deadline, and a re-run would only repeat outbound traffic.
 */
export const scannerActor = (options: ScanOptions) =>
  defineActor<ScanJob, Pool>({
    name: "scanner",
    streams: SCAN_STREAM,
    schema: scanJobSchema,
    handler: scanHandler(runScan, options, runRecheck),
    concurrency: 8,
    maxAttempts: 2,
    backoffBaseMs: 500,
    claimIdleMs: 60_000,
    replyTtlSeconds: 60,
  });

export function startScanner(ctx: Context): Promise<RunningActor> {
  return startActor(ctx, scannerActor(scanOptionsOf(ctx.config)));
}
