/**
 * Findings: the remediation workflow (assignments, acceptances, overdue and risk timers) and
 * what a stored scan does to it.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export { countAcceptances, insertAcceptance, listAcceptances, lockDomainRow, releaseAcceptance } from "./db/acknowledgements.js";
export {
  ASSIGNMENT_STATUSES,
  assignmentById,
  type AssignmentChange,
  type AssignmentRow,
  type AssignmentStatus,
  findAssignment,
  hasScans,
  historyOf,
  type HistoryRow,
  insertHistory,
  countNotes,
  insertNote,
  isAssignmentStatus,
  latestFinding,
  listAssignments,
  lockAssignment,
  type NoteRow,
  notesOf,
  notesPageOf,
  unassignMember,
  updateAssignment,
} from "./db/assignments.js";
export {
  claimCrossing,
  claimRisk,
  crossingCandidates,
  type CrossingRules,
  type FindingCrossing,
  riskCandidates,
  type RiskCrossing,
} from "./db/timers.js";
export { riskFindingFields } from "./risk.js";
export { applyScanToFindings } from "./scan-stored.js";
export {
  dateOf,
  daysOverdue,
  isOverdue,
  isPastTarget,
  type Move,
  ownerOf,
  recordMove,
  targetDate,
} from "./workflow.js";
