import { reopenDone } from "../db/assignments.js";
import type { Queryable } from "../db/pool.js";
import { recordMove } from "./workflow.js";

/** Statuses that mean a finding is failing again (a `done` assignment of it reopens). */
const FAILING = new Set(["warn", "fail"]);

/**
 * Reopens, in the scan's own transaction, the `done` assignments of findings the stored
 * scan reports failing: status back to `open`, a history entry, `finding.reopened` (which
 * the notifier reads) and an activity entry. Returns how many reopened.
 */
export async function reopenFailing(
  tx: Queryable,
  scan: { orgId: number; domain: string; findings: readonly { id: string; status: string }[]; nowMs: number },
): Promise<number> {
  const failing = scan.findings.filter((f) => FAILING.has(f.status)).map((f) => f.id);
  const reopened = await reopenDone(tx, scan.orgId, scan.domain, failing, scan.nowMs);
  for (const row of reopened) {
    await recordMove(tx, {
      row, atMs: scan.nowMs, who: "system", via: "system", what: "reopened: a later scan found it failing again", code: "finding.reopened",
      event: { type: "finding.reopened" },
      activity: { group: "monitoring", action: `Reopened ${row.finding_key} on ${row.domain}: a scan found it failing again` },
    });
  }
  return reopened.length;
}
