import type { Queryable } from "../platform/db/pool.js";
import { assignAutomatically, recordAutomaticAssignment } from "./auto-assign.js";
import { failingFindings, recordReopen, reopenRows } from "./reopen.js";

/**
 * What storing a scan does to the findings workflow, in the scan's own transaction:
 * `done` assignments of findings failing again reopen, and failing findings nobody tracks
 * are assigned to the organization's default owner. Every assignment row is written (and
 * so locked) before the first event takes the organization's event lock: the order every
 * other writer uses (row, then event lock), so this never deadlocks with assignments.php.
 * The caller runs it once per scan job (a redelivered job must not reopen twice).
 */
export async function applyScanToFindings(
  tx: Queryable,
  scan: { orgId: number; domain: string; findings: readonly { id: string; status: string; label: string }[]; nowMs: number },
): Promise<{ reopened: number; assigned: number }> {
  const failing = failingFindings(scan.findings);
  const reopened = await reopenRows(tx, {
    orgId: scan.orgId,
    domain: scan.domain,
    failingKeys: failing.map((f) => f.id),
    nowMs: scan.nowMs,
  });
  const assigned = await assignAutomatically(tx, { orgId: scan.orgId, domain: scan.domain, failing, reopened, nowMs: scan.nowMs });
  for (const row of reopened) await recordReopen(tx, row, scan.nowMs);
  for (const move of assigned) await recordAutomaticAssignment(tx, move, scan.nowMs);
  return { reopened: reopened.length, assigned: assigned.length };
}
