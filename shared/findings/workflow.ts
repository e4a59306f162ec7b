/**
 * The findings workflow's one way to record a move: the history entry, the event of
 * interface.md section 6 (which the notifier reads from the events stream: that is the
 * "message to the notifier", written by the outbox in the same transaction) and the
 * activity entry. Callers hold the assignment row locked in their transaction.
 */
import { recordActivity, type ActivityGroup } from "../accounts/index.js";
import { insertHistory, type AssignmentRow } from "./db/assignments.js";
import { insertEvent, type FindingEventType, type FindingExtra, type FindingFields, type Owner } from "../events/index.js";
import type { Queryable } from "../platform/db/pool.js";

export type { FindingFields, Owner };

export function ownerOf(row: Pick<AssignmentRow, "owner_name" | "owner_email">): Owner | null {
  return row.owner_email !== null ? { name: row.owner_name ?? "", email: row.owner_email } : null;
}

export function findingFields(row: AssignmentRow): FindingFields {
  return { finding_key: row.finding_key, finding: row.finding, owner: ownerOf(row), status: row.status, due_at: row.due_at };
}

/** `YYYY-MM-DD` of an instant, in UTC (the service's calendar). */
export function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export const DAY_MS = 86_400_000;

/** The date the fix-time target falls on: found_at plus the organization's fix_target_days. */
export function targetDate(row: Pick<AssignmentRow, "found_at" | "fix_target_days">): string {
  return dateOf(row.found_at.getTime() + row.fix_target_days * DAY_MS);
}

/** Past its due date: the due day has ended on the shared clock. Done findings are never overdue. */
export function isOverdue(row: Pick<AssignmentRow, "status" | "due_at">, nowMs: number): boolean {
  return row.status !== "done" && row.due_at !== null && row.due_at < dateOf(nowMs);
}

/** Open (or in progress) longer than the fix-time target since a scan first found it. */
export function isPastTarget(row: Pick<AssignmentRow, "status" | "found_at" | "fix_target_days">, nowMs: number): boolean {
  return row.status !== "done" && nowMs > row.found_at.getTime() + row.fix_target_days * DAY_MS;
}

/** Whole days since the due date (0 on the due day itself). */
export function daysOverdue(dueAt: string, nowMs: number): number {
  return Math.max(0, Math.floor((Date.parse(`${dateOf(nowMs)}T00:00:00Z`) - Date.parse(`${dueAt}T00:00:00Z`)) / DAY_MS));
}

/** A finding event of a move: `extra` holds what the type adds to the finding fields (none for some). */
export type MoveEvent = {
  // biome-ignore lint/complexity/noBannedTypes: `{} extends X` asks whether every field of X is optional
  [K in FindingEventType]: {} extends FindingExtra<K> ? { type: K; extra?: FindingExtra<K> } : { type: K; extra: FindingExtra<K> };
}[FindingEventType];

export interface Move {
  /** The assignment after the move (its finding fields go into the event). */
  row: AssignmentRow;
  atMs: number;
  who: string;
  via: "api" | "admin" | "system";
  /** History text, in words. */
  what: string;
  /** Short code, also the activity action_code. */
  code: string;
  /** The event to emit, if the move has one in section 6: its type and the fields it adds to the finding's. */
  event?: MoveEvent;
  activity: { group: ActivityGroup; action: string };
  detail?: Record<string, unknown>;
}

export async function recordMove(tx: Queryable, move: Move): Promise<void> {
  const automatic = move.via === "system";
  await insertHistory(tx, {
    assignmentId: move.row.id,
    atMs: move.atMs,
    who: move.who,
    what: move.what,
    detail: { code: move.code, automatic, ...(move.detail ?? {}) },
  });
  if (move.event) {
    await insertEvent(tx, {
      orgId: move.row.org_id,
      type: move.event.type,
      timeMs: move.atMs,
      domain: move.row.domain,
      payload: { ...findingFields(move.row), ...(move.event.extra ?? {}) },
    });
  }
  await recordActivity(tx, {
    orgId: move.row.org_id,
    atMs: move.atMs,
    who: move.who,
    via: move.via,
    group: move.activity.group,
    action: move.activity.action,
    actionCode: move.code,
    domain: move.row.domain,
    detail: { finding_key: move.row.finding_key, ...(move.detail ?? {}) },
  });
}
