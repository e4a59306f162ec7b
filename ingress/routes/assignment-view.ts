import {
  type AssignmentRow,
  type HistoryRow,
  type NoteRow,
  isOverdue,
  isPastTarget,
  ownerOf,
  targetDate,
} from "../../shared/findings/index.js";

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** interface.md 2.7, plus `found_at` and `target_date` (when the fix-time target falls). */
export function assignmentView(row: AssignmentRow, nowMs: number) {
  return {
    domain: row.domain,
    finding_key: row.finding_key,
    finding: row.finding,
    status: row.status,
    owner: ownerOf(row),
    due_at: row.due_at,
    overdue: isOverdue(row, nowMs),
    past_target: isPastTarget(row, nowMs),
    updated_at: iso(row.updated_at),
    found_at: iso(row.found_at),
    target_date: targetDate(row),
  };
}

export function historyView(row: HistoryRow) {
  const code = typeof row.detail?.code === "string" ? row.detail.code : null;
  return { time: iso(row.at), who: row.who, what: row.what, code, automatic: row.detail?.automatic === true };
}

export function noteView(row: NoteRow) {
  return { id: row.id, time: iso(row.at), who: row.who, body: row.body };
}
