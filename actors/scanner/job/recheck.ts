import { insertRecheck, type StoredFinding, type RecheckReply, type ScanJob } from "../../../shared/scans/index.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import type { Helpers } from "../../runtime/index.js";
import type { ScanOptions } from "../../../shared/platform/net/outbound/options.js";

/** Re-runs one finding's check (its section's retrieval only, behind the same SSRF guard and time-outs). */
export type RunRecheck = (domain: string, findingKey: string, options: ScanOptions, nowMs: number) => Promise<StoredFinding | null>;

/**
 * A re-check job (trigger `recheck` with a finding_key): runs the one check, stores the
 * result and replies. Whether the assignment moves is the requester's business (it holds
 * the assignment row in its own transaction).
 */
export async function handleRecheck(
  job: ScanJob & { finding_key: string },
  helpers: Helpers<Pool>,
  run: RunRecheck,
  options: ScanOptions,
): Promise<void> {
  let finding: StoredFinding | null;
  try {
    finding = await run(job.domain, job.finding_key, options, helpers.clock.now());
  } catch (error) {
    helpers.logger.error({ err: error, domain: job.domain, finding: job.finding_key }, "re-check failed");
    await helpers.reply?.({ ok: false, error: "scan_failed" } satisfies RecheckReply);
    return;
  }
  if (!finding) {
    await helpers.reply?.({ ok: false, error: "unknown_finding" } satisfies RecheckReply);
    return;
  }
  await insertRecheck(helpers.db, {
    orgId: job.org_id,
    domain: job.domain,
    findingKey: job.finding_key,
    status: finding.status,
    summary: finding.summary,
    detail: finding.detail,
    evidence: finding.evidence,
    jobId: job.job_id,
    atMs: helpers.clock.now(),
  });
  const { id, status, summary, detail, evidence } = finding;
  await helpers.reply?.({ ok: true, finding: { id, status, summary, detail, evidence } } satisfies RecheckReply);
}
