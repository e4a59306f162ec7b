import { reopenDone, type AssignmentRow } from "./db/assignments.js";
import type { Queryable } from "../platform/db/pool.js";
import { recordMove } from "./workflow.js";

/** Statuses that mean a finding is failing: a `done` assignment of it reopens, an unassigned one may be assigned. */
const FAILING = new Set(["warn", "fail"]);

export function failingFindings<F extends { id: string; status: string }>(findings: readonly F[]): F[] {
  return findings.filter((f) => FAILING.has(f.status));
}

/**
 * Moves the `done` assignments of the failing findings back to `open` (a new episode: the
 * overdue and escalation marks are cleared), locked. The moves are recorded afterwards by
 * recordReopen, once every row the scan touches is locked.
 */
export function reopenRows(
  tx: Queryable,
  scan: { orgId: number; domain: string; failingKeys: readonly string[]; nowMs: number },
): Promise<AssignmentRow[]> {
  return reopenDone(tx, scan.orgId, scan.domain, scan.failingKeys, scan.nowMs);
}

/** The history entry, `finding.reopened` (which the notifier reads) and the activity entry of one reopen. */
export function recordReopen(tx: Queryable, row: AssignmentRow, nowMs: number): Promise<void> {
  return recordMove(tx, {
    row,
    atMs: nowMs,
    who: "system",
    via: "system",
    what: "reopened: a later scan found it failing again",
    code: "finding.reopened",
    event: { type: "finding.reopened" },
    activity: { group: "monitoring", action: `Reopened ${row.finding_key} on ${row.domain}: a scan found it failing again` },
  });
}
