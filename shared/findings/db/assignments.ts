import type { ListPage, PageRange, Queryable } from "../../platform/db/pool.js";
import { isOneOf } from "../../platform/one-of.js";

export const ASSIGNMENT_STATUSES = ["open", "in_progress", "done"] as const;
export type AssignmentStatus = (typeof ASSIGNMENT_STATUSES)[number];

export function isAssignmentStatus(value: unknown): value is AssignmentStatus {
  return isOneOf(ASSIGNMENT_STATUSES, value);
}

/** An assignment with its owner and its organization's fix-time target, as every reader needs it. */
export interface AssignmentRow {
  id: number;
  org_id: number;
  domain: string;
  finding_key: string;
  finding: string;
  status: AssignmentStatus;
  owner_id: number | null;
  owner_name: string | null;
  owner_email: string | null;
  /** `YYYY-MM-DD` or null. */
  due_at: string | null;
  found_at: Date;
  updated_at: Date;
  fix_target_days: number;
}

const SELECT = `
  SELECT a.id, a.org_id, a.domain, a.finding_key, a.finding, a.status, a.owner_id,
         m.name AS owner_name, m.email AS owner_email, to_char(a.due_at, 'YYYY-MM-DD') AS due_at,
         a.found_at, a.updated_at, o.fix_target_days
  FROM assignments a JOIN orgs o ON o.id = a.org_id LEFT JOIN members m ON m.id = a.owner_id`;

export interface AssignmentFilter {
  statuses: readonly AssignmentStatus[];
  domain?: string;
  ownerId?: number;
  overdueOnly?: boolean;
  /** Today on the shared clock, `YYYY-MM-DD` (UTC): a due date before it has passed. */
  today: string;
  limit: number;
}

/** Overdue first, then by due date (none last), then by finding key and domain. */
export async function listAssignments(db: Queryable, orgId: number, filter: AssignmentFilter): Promise<AssignmentRow[]> {
  const { rows } = await db.query<AssignmentRow>(
    `${SELECT}
     WHERE a.org_id = $1 AND a.status = ANY($2::text[])
       AND ($3::text IS NULL OR a.domain = $3)
       AND ($4::bigint IS NULL OR a.owner_id = $4)
       AND (NOT $5 OR (a.status <> 'done' AND a.due_at < $6::date))
     ORDER BY (a.status <> 'done' AND a.due_at IS NOT NULL AND a.due_at < $6::date) DESC,
              a.due_at ASC NULLS LAST, a.finding_key, a.domain
     LIMIT $7`,
    [orgId, filter.statuses, filter.domain ?? null, filter.ownerId ?? null, filter.overdueOnly ?? false, filter.today, filter.limit],
  );
  return rows;
}

export async function findAssignment(
  db: Queryable,
  orgId: number,
  domain: string,
  findingKey: string,
  lock = false,
): Promise<AssignmentRow | null> {
  const { rows } = await db.query<AssignmentRow>(
    `${SELECT} WHERE a.org_id = $1 AND a.domain = $2 AND a.finding_key = $3${lock ? " FOR UPDATE OF a" : ""}`,
    [orgId, domain, findingKey],
  );
  return rows[0] ?? null;
}

export async function assignmentById(db: Queryable, id: number): Promise<AssignmentRow | null> {
  const { rows } = await db.query<AssignmentRow>(`${SELECT} WHERE a.id = $1`, [id]);
  return rows[0] ?? null;
}

/**
 * The assignment of a finding, created `open` and unowned when it has none yet, locked
 * for the rest of the transaction (two changes of one finding queue up).
 */
export async function lockAssignment(
  tx: Queryable,
  input: { orgId: number; domain: string; findingKey: string; finding: string; foundMs: number; nowMs: number },
): Promise<{ row: AssignmentRow; created: boolean }> {
  const inserted = await tx.query(
    `INSERT INTO assignments (org_id, domain, finding_key, finding, status, found_at, updated_at)
     VALUES ($1, $2, $3, $4, 'open', to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0))
     ON CONFLICT (org_id, domain, finding_key) DO NOTHING`,
    [input.orgId, input.domain, input.findingKey, input.finding, input.foundMs, input.nowMs],
  );
  const row = await findAssignment(tx, input.orgId, input.domain, input.findingKey, true);
  if (!row) throw new Error("assignment vanished inside its transaction");
  return { row, created: (inserted.rowCount ?? 0) > 0 };
}

export interface AssignmentChange {
  ownerId?: number | null;
  status?: AssignmentStatus;
  /** `YYYY-MM-DD`, or null to clear. */
  dueAt?: string | null;
}

/**
 * Applies a change. A new due date starts new overdue and escalation crossings; a move
 * out of `done` (reopen) does too, so the timers can tell about the new episode.
 */
export async function updateAssignment(tx: Queryable, id: number, change: AssignmentChange, nowMs: number): Promise<void> {
  await tx.query(
    `UPDATE assignments SET
       owner_id = CASE WHEN $2 THEN $3::bigint ELSE owner_id END,
       status = COALESCE($4, status),
       due_at = CASE WHEN $5 THEN $6::date ELSE due_at END,
       overdue_notified_at = CASE WHEN ($5 AND $6::date IS DISTINCT FROM due_at) OR (status = 'done' AND COALESCE($4, status) <> 'done')
                                  THEN NULL ELSE overdue_notified_at END,
       escalated_notified_at = CASE WHEN ($5 AND $6::date IS DISTINCT FROM due_at) OR (status = 'done' AND COALESCE($4, status) <> 'done')
                                    THEN NULL ELSE escalated_notified_at END,
       updated_at = to_timestamp($7 / 1000.0)
     WHERE id = $1`,
    [
      id,
      change.ownerId !== undefined,
      change.ownerId ?? null,
      change.status ?? null,
      change.dueAt !== undefined,
      change.dueAt ?? null,
      nowMs,
    ],
  );
}

/**
 * Unassigns every assignment of the organization a member owns (the member is being
 * removed, and its row with it): each keeps its status, due date and history, its owner
 * becomes nobody, and a history entry says whom it was taken from and why (the foreign key
 * would clear the owner too, silently). No event and no notice: nobody is newly assigned;
 * automatic assignment gives such a finding to the default owner when it reopens. Answers
 * how many were unassigned.
 */
export async function unassignMember(
  tx: Queryable,
  input: { orgId: number; memberId: number; atMs: number; who: string; what: string; detail: Record<string, unknown> },
): Promise<number> {
  const { rowCount } = await tx.query(
    `WITH cleared AS (
       UPDATE assignments SET owner_id = NULL, updated_at = to_timestamp($3 / 1000.0)
       WHERE org_id = $1 AND owner_id = $2 RETURNING id)
     INSERT INTO assignment_history (assignment_id, at, who, what, detail)
     SELECT id, to_timestamp($3 / 1000.0), $4, $5, $6::jsonb FROM cleared`,
    [input.orgId, input.memberId, input.atMs, input.who, input.what, JSON.stringify(input.detail)],
  );
  return rowCount ?? 0;
}

export interface HistoryRow {
  at: Date;
  who: string;
  what: string;
  detail: Record<string, unknown> | null;
}

export async function insertHistory(
  tx: Queryable,
  entry: { assignmentId: number; atMs: number; who: string; what: string; detail?: Record<string, unknown> },
): Promise<void> {
  await tx.query(
    "INSERT INTO assignment_history (assignment_id, at, who, what, detail) VALUES ($1, to_timestamp($2 / 1000.0), $3, $4, $5)",
    [entry.assignmentId, entry.atMs, entry.who, entry.what, entry.detail ? JSON.stringify(entry.detail) : null],
  );
}

/** Oldest first. */
export async function historyOf(db: Queryable, assignmentId: number): Promise<HistoryRow[]> {
  const { rows } = await db.query<HistoryRow>(
    "SELECT at, who, what, detail FROM assignment_history WHERE assignment_id = $1 ORDER BY at, id",
    [assignmentId],
  );
  return rows;
}

export interface NoteRow {
  id: number;
  at: Date;
  who: string;
  body: string;
}

/** How many notes an assigned finding has (ORG_LIMITS). */
export async function countNotes(db: Queryable, assignmentId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM assignment_notes WHERE assignment_id = $1", [
    assignmentId,
  ]);
  return rows[0].n;
}

export async function insertNote(tx: Queryable, note: { assignmentId: number; atMs: number; who: string; body: string }): Promise<NoteRow> {
  const { rows } = await tx.query<NoteRow>(
    "INSERT INTO assignment_notes (assignment_id, at, who, body) VALUES ($1, to_timestamp($2 / 1000.0), $3, $4) RETURNING id, at, who, body",
    [note.assignmentId, note.atMs, note.who, note.body],
  );
  return rows[0];
}

/** Oldest first. */
export async function notesOf(db: Queryable, assignmentId: number): Promise<NoteRow[]> {
  const { rows } = await db.query<NoteRow>("SELECT id, at, who, body FROM assignment_notes WHERE assignment_id = $1 ORDER BY at, id", [
    assignmentId,
  ]);
  return rows;
}

/** A page of the notes, oldest first. */
export async function notesPageOf(db: Queryable, assignmentId: number, page: PageRange): Promise<ListPage<NoteRow>> {
  const [total, found] = await Promise.all([
    countNotes(db, assignmentId),
    db.query<NoteRow>("SELECT id, at, who, body FROM assignment_notes WHERE assignment_id = $1 ORDER BY at, id LIMIT $2 OFFSET $3", [
      assignmentId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { total, rows: found.rows };
}

/**
 * What the latest scans of a domain say about one finding: its label, its status, and
 * when a scan first reported it not passing (the start of the fix-time target). Null
 * when the latest web and dns scans do not report it at all.
 */
export async function latestFinding(
  db: Queryable,
  orgId: number,
  domain: string,
  findingKey: string,
): Promise<{ label: string; status: string; first_found_at: Date | null } | null> {
  const { rows } = await db.query<{ label: string; status: string; first_found_at: Date | null }>(
    `WITH latest AS (
       SELECT DISTINCT ON (kind) id FROM scans WHERE org_id = $1 AND domain = $2 AND kind IN ('web', 'dns')
       ORDER BY kind, completed_at DESC, id DESC
     )
     SELECT f.label, f.status,
       (SELECT min(s.completed_at) FROM scans s JOIN findings g ON g.scan_id = s.id
        WHERE s.org_id = $1 AND s.domain = $2 AND g.finding_key = $3 AND g.status IN ('warn', 'fail')) AS first_found_at
     FROM findings f WHERE f.scan_id IN (SELECT id FROM latest) AND f.finding_key = $3 LIMIT 1`,
    [orgId, domain, findingKey],
  );
  return rows[0] ?? null;
}

export async function hasScans(db: Queryable, orgId: number, domain: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM scans WHERE org_id = $1 AND domain = $2 LIMIT 1", [orgId, domain]);
  return rows.length > 0;
}

/**
 * Moves the `done` assignments of the given findings back to `open` (a later scan found
 * them failing again), locked, and returns them as they were before the move.
 */
export async function reopenDone(
  tx: Queryable,
  orgId: number,
  domain: string,
  findingKeys: readonly string[],
  nowMs: number,
): Promise<AssignmentRow[]> {
  if (findingKeys.length === 0) return [];
  const { rows } = await tx.query<{ id: number }>(
    `UPDATE assignments SET status = 'open', overdue_notified_at = NULL, escalated_notified_at = NULL, updated_at = to_timestamp($4 / 1000.0)
     WHERE org_id = $1 AND domain = $2 AND finding_key = ANY($3::text[]) AND status = 'done' RETURNING id`,
    [orgId, domain, findingKeys, nowMs],
  );
  const out: AssignmentRow[] = [];
  for (const { id } of rows.sort((a, b) => a.id - b.id)) {
    const row = await assignmentById(tx, id);
    if (row) out.push(row);
  }
  return out;
}

/**
 * When a stored scan of the domain first reported each finding `warn` or `fail` (the start
 * of its fix-time target); findings no stored scan reported failing are absent.
 */
export async function firstFailingTimes(
  db: Queryable,
  orgId: number,
  domain: string,
  findingKeys: readonly string[],
): Promise<Map<string, Date>> {
  if (findingKeys.length === 0) return new Map();
  const { rows } = await db.query<{ finding_key: string; first: Date }>(
    `SELECT g.finding_key, min(s.completed_at) AS first FROM scans s JOIN findings g ON g.scan_id = s.id
     WHERE s.org_id = $1 AND s.domain = $2 AND g.finding_key = ANY($3::text[]) AND g.status IN ('warn', 'fail')
     GROUP BY g.finding_key`,
    [orgId, domain, findingKeys],
  );
  return new Map(rows.map((r) => [r.finding_key, r.first]));
}

export interface NewAutomaticAssignment {
  findingKey: string;
  finding: string;
  foundMs: number;
  /** `YYYY-MM-DD`. */
  dueAt: string;
}

/**
 * Creates the assignments of findings that have none yet, owned and due, and returns the
 * ids of those it created (in finding-key order), locked by the insert. A finding that
 * has an assignment (made by a person, an earlier scan, or a transaction that committed
 * first) is left alone.
 */
export async function insertOwnedAssignments(
  tx: Queryable,
  input: { orgId: number; domain: string; ownerId: number; nowMs: number; findings: readonly NewAutomaticAssignment[] },
): Promise<number[]> {
  if (input.findings.length === 0) return [];
  const sorted = [...input.findings].sort((a, b) => (a.findingKey < b.findingKey ? -1 : a.findingKey > b.findingKey ? 1 : 0));
  const { rows } = await tx.query<{ id: number; finding_key: string }>(
    `INSERT INTO assignments (org_id, domain, finding_key, finding, status, owner_id, due_at, found_at, updated_at)
     SELECT $1, $2, f.finding_key, f.finding, 'open', $3, f.due_at::date, to_timestamp(f.found_ms / 1000.0), to_timestamp($4 / 1000.0)
     FROM jsonb_to_recordset($5::jsonb) AS f(finding_key text, finding text, due_at text, found_ms float8, position int)
     ORDER BY f.position
     ON CONFLICT (org_id, domain, finding_key) DO NOTHING
     RETURNING id, finding_key`,
    [
      input.orgId,
      input.domain,
      input.ownerId,
      input.nowMs,
      JSON.stringify(
        sorted.map((f, position) => ({ finding_key: f.findingKey, finding: f.finding, due_at: f.dueAt, found_ms: f.foundMs, position })),
      ),
    ],
  );
  return rows.sort((a, b) => (a.finding_key < b.finding_key ? -1 : 1)).map((r) => r.id);
}
