/**
 * Automatic assignment (docs/findings.md "Automatic assignment"): with the organization's
 * `default_owner` set, a failing finding that nobody tracks yet is assigned to that member
 * when a scan stores it, and so is a reopened assignment that has no owner. Accepted risks
 * are left alone. Runs in the scan's storing transaction, so the assignment, its history,
 * `finding.assigned` (`automatic: true`, `by: "system"`) and activity commit with the scan.
 */
import { acceptedFindings } from "./db/acknowledgements.js";
import { assignmentById, firstFailingTimes, insertOwnedAssignments, updateAssignment, type AssignmentRow } from "./db/assignments.js";
import { defaultOwnerOf } from "../accounts/index.js";
import type { Queryable } from "../platform/db/pool.js";
import { DAY_MS, dateOf, recordMove } from "./workflow.js";

/** Who history, events and activity name for automatic moves. */
export const SYSTEM_ACTOR = "system";

/**
 * The due date of an automatic assignment: the fix-time target of the episode (its start
 * plus the organization's fix_target_days), never before today: a finding already past its
 * target when it is assigned is due today (and `past_target` says it is late).
 */
export function automaticDue(episodeStartMs: number, fixTargetDays: number, nowMs: number): string {
  const target = dateOf(episodeStartMs + fixTargetDays * DAY_MS);
  const today = dateOf(nowMs);
  // biome-ignore lint/complexity/useMathMinMax: ISO dates (strings), compared as text
  return target < today ? today : target;
}

/** One automatic assignment to record: the row before (null when it was just created) and after. */
export interface AutomaticAssignment {
  before: AssignmentRow | null;
  after: AssignmentRow;
}

async function reread(tx: Queryable, id: number): Promise<AssignmentRow> {
  const row = await assignmentById(tx, id);
  if (!row) throw new Error("assignment vanished inside its transaction");
  return row;
}

/**
 * Writes (and so locks) the automatic assignments of one stored scan; recordAutomaticAssignment
 * records each afterwards. `failing` are the scan's failing findings, `reopened` the
 * assignments the same scan just reopened.
 */
export async function assignAutomatically(
  tx: Queryable,
  scan: {
    orgId: number;
    domain: string;
    failing: readonly { id: string; label: string }[];
    reopened: readonly AssignmentRow[];
    nowMs: number;
  },
): Promise<AutomaticAssignment[]> {
  if (scan.failing.length === 0) return [];
  const owner = await defaultOwnerOf(tx, scan.orgId);
  if (!owner) return [];
  const keys = scan.failing.map((f) => f.id);
  const accepted = await acceptedFindings(tx, scan.orgId, scan.domain, keys);
  const out: AutomaticAssignment[] = [];

  // Reopened without an owner (nobody took it, or its owner was removed): a new episode,
  // given to the default owner with a full fix-time window unless its due date still stands.
  const today = dateOf(scan.nowMs);
  for (const before of scan.reopened) {
    if (before.owner_id !== null || accepted.has(before.finding_key)) continue;
    const keepDue = before.due_at !== null && before.due_at >= today;
    await updateAssignment(
      tx,
      before.id,
      { ownerId: owner.member.id, ...(keepDue ? {} : { dueAt: automaticDue(scan.nowMs, owner.fixTargetDays, scan.nowMs) }) },
      scan.nowMs,
    );
    out.push({ before, after: await reread(tx, before.id) });
  }

  // Never tracked: created owned, open, due at the fix-time target counted from the first
  // scan that found it failing (this one when none did before).
  const fresh = scan.failing.filter((f) => !accepted.has(f.id));
  const firstSeen = await firstFailingTimes(
    tx,
    scan.orgId,
    scan.domain,
    fresh.map((f) => f.id),
  );
  const created = await insertOwnedAssignments(tx, {
    orgId: scan.orgId,
    domain: scan.domain,
    ownerId: owner.member.id,
    nowMs: scan.nowMs,
    findings: fresh.map((f) => {
      const foundMs = Math.min(firstSeen.get(f.id)?.getTime() ?? scan.nowMs, scan.nowMs);
      return { findingKey: f.id, finding: f.label, foundMs, dueAt: automaticDue(foundMs, owner.fixTargetDays, scan.nowMs) };
    }),
  });
  for (const id of created) out.push({ before: null, after: await reread(tx, id) });
  return out;
}

/** History (assigned, and the due date when it changed), `finding.assigned` and activity of one automatic assignment. */
export async function recordAutomaticAssignment(tx: Queryable, move: AutomaticAssignment, nowMs: number): Promise<void> {
  const { before, after } = move;
  const owner = `${after.owner_name} <${after.owner_email}>`;
  const name = `${after.finding_key} on ${after.domain}`;
  const base = { row: after, atMs: nowMs, who: SYSTEM_ACTOR, via: "system" as const };
  await recordMove(tx, {
    ...base,
    what: `assigned to ${owner} (automatic: the organization's default owner)`,
    code: "finding.assigned",
    event: { type: "finding.assigned", extra: { by: SYSTEM_ACTOR, automatic: true, previous_owner: null } },
    activity: { group: "ownership", action: `Assigned ${name} to ${owner} automatically (default owner)` },
    detail: { owner: after.owner_email, previous_owner: null, reopened: before !== null },
  });
  if (after.due_at !== (before?.due_at ?? null)) {
    await recordMove(tx, {
      ...base,
      what: `due date set to ${after.due_at} (automatic: the fix-time target)`,
      code: "finding.due_set",
      activity: { group: "ownership", action: `Due date of ${name} set to ${after.due_at} automatically (fix-time target)` },
      detail: { due_at: after.due_at, previous_due_at: before?.due_at ?? null },
    });
  }
}
