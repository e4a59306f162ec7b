import { recordActivity } from "../../../shared/accounts/index.js";
import { transaction, type Pool } from "../../../shared/platform/db/pool.js";
import { insertEvent } from "../../../shared/events/index.js";
import {
  findingsOf,
  insertScan,
  jobStored,
  previousScan,
  type ScanKind,
  type SectionInput,
  type ScanJob,
  type ScanReply,
} from "../../../shared/scans/index.js";
import type { Helpers } from "../../runtime/index.js";
import { CheckBudgetExceeded } from "../offload/pool.js";
import { ScanDeadlineExceeded } from "../retrieve/deadline.js";
import type { ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { applyScanToFindings } from "../../../shared/findings/index.js";
import { compareFindings } from "./regression.js";
import { handleRecheck, type RunRecheck } from "./recheck.js";

/** What the handler stores of a scan (runScan's ScanResult has these and more). */
export interface ScanSections {
  algorithm: string;
  dns: SectionInput;
  web: SectionInput;
}

export type RunScan = (domain: string, options: ScanOptions, nowMs: number) => Promise<ScanSections>;

/**
 * Runs one scan job: retrieval and checks outside any transaction, then one
 * transaction stores both sections, their `scan.completed` events and any
 * `scan.regression`. A redelivered job finds its scans stored (job_id is unique per
 * kind) and only replies again.
 */
export function scanHandler(runScan: RunScan, options: ScanOptions, runRecheck?: RunRecheck) {
  return async (job: ScanJob, helpers: Helpers<Pool>): Promise<void> => {
    if (job.finding_key !== undefined) {
      if (!runRecheck) throw new Error("this scanner cannot re-check single findings");
      await handleRecheck({ ...job, finding_key: job.finding_key }, helpers, runRecheck, options);
      return;
    }
    const startedMs = helpers.clock.now();
    let result: ScanSections;
    try {
      result = await runScan(job.domain, options, startedMs);
    } catch (error) {
      // Over its budget the scan answers scan_failed and stores nothing: a partial grade would read as the site's.
      // Past its deadline with no DNS answer at all, likewise: a grade of time-outs is not the site's.
      if (error instanceof CheckBudgetExceeded)
        helpers.logger.warn({ domain: job.domain, orgId: job.org_id, budgetMs: error.budgetMs }, "scan checks exceeded their time budget");
      else if (error instanceof ScanDeadlineExceeded)
        helpers.logger.warn(
          { domain: job.domain, orgId: job.org_id, deadlineMs: error.deadlineMs },
          "scan retrieved nothing within its deadline",
        );
      else helpers.logger.error({ err: error, domain: job.domain }, "scan failed");
      await helpers.reply?.({ ok: false, error: "scan_failed" } satisfies ScanReply);
      return;
    }
    const completedMs = helpers.clock.now();
    const ids = await transaction(helpers.db, async (tx) => {
      const stored: Record<ScanKind, number> = { web: 0, dns: 0 };
      let createdAny = false;
      // Reopening and automatic assignment lock assignment rows: done before the first event
      // takes the organization's event lock, in the order every other writer uses (row, then event lock).
      if (!(await jobStored(tx, job.job_id))) {
        await applyScanToFindings(tx, {
          orgId: job.org_id,
          domain: job.domain,
          findings: [...result.dns.findings, ...result.web.findings],
          nowMs: completedMs,
        });
      }
      for (const kind of ["dns", "web"] as const) {
        const section = result[kind];
        const { scan, created } = await insertScan(tx, {
          orgId: job.org_id,
          domain: job.domain,
          kind,
          section,
          algorithm: result.algorithm,
          trigger: job.trigger,
          jobId: job.job_id,
          startedMs,
          completedMs,
        });
        stored[kind] = scan.id;
        if (!created) continue;
        createdAny = true;
        await insertEvent(tx, {
          orgId: job.org_id,
          type: "scan.completed",
          timeMs: completedMs,
          domain: job.domain,
          payload: {
            kind,
            grade: section.grade,
            score: section.score,
            fail_count: section.fail_count,
            warn_count: section.warn_count,
            scan_id: scan.id,
          },
        });
        const previous = await previousScan(tx, job.org_id, job.domain, kind, scan.id);
        if (previous) {
          const change = compareFindings(await findingsOf(tx, previous.id), section.findings);
          if (change.new_issues.length > 0) {
            await insertEvent(tx, {
              orgId: job.org_id,
              type: "scan.regression",
              timeMs: completedMs,
              domain: job.domain,
              payload: { kind, ...change, previous_grade: previous.grade, grade: section.grade },
            });
          }
        }
      }
      if (!createdAny) return stored;
      await recordActivity(tx, {
        orgId: job.org_id,
        atMs: completedMs,
        who: job.trigger === "api" ? "API" : "system",
        via: job.trigger === "api" ? "api" : "system",
        group: "monitoring",
        domain: job.domain,
        action: `Scan of ${job.domain}: web ${result.web.grade}, dns ${result.dns.grade}`,
        actionCode: "scan.completed",
        detail: { web: result.web.grade, dns: result.dns.grade },
      });
      return stored;
    });
    await helpers.reply?.({ ok: true, scans: ids } satisfies ScanReply);
  };
}
