import {
  ASSIGNMENT_STATUSES,
  findAssignment,
  historyOf,
  isAssignmentStatus,
  listAssignments,
  notesOf,
  type AssignmentStatus,
  dateOf,
} from "../../shared/findings/index.js";
import { findMemberByEmail } from "../../shared/accounts/index.js";
import { normalizeDomain, unstorableField } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { readParams, str, type Params } from "../params.js";
import { ok, refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { assignmentView, historyView, noteView } from "./assignment-view.js";
import { changeAssignment, recheckAssignment, type WriteGate } from "./assignments-write.js";
import { passGate } from "./gate.js";
import { changeBudget } from "./hourly-budget.js";
import { assignmentsParams } from "./schemas.js";

/** interface.md section 8. */
export const MAX_ASSIGNMENTS = 500;
/** How long a re-check waits for the scanner before answering 504 `timeout`. */
export const RECHECK_TIMEOUT_MS = 25_000;

const isOne = (value: unknown) => value === "1" || value === 1 || value === true;

/**
 * assignments.php (interface.md 4.7, 4.8): server keys only, through the shared gate
 * (counted like any call). GET lists or tells one finding's story; POST changes one
 * assignment or re-checks its finding.
 */
export function assignmentsRoute(timeoutMs = RECHECK_TIMEOUT_MS) {
  return async (request: HttpRequest, deps: IngressDeps): Promise<HttpReply> => {
    const params = readParams(request);
    // NUL or a lone surrogate would reach PostgreSQL's text comparisons: a 400, never a 500.
    if (params === null || !assignmentsParams(params) || unstorableField(params) !== null) return refuse("bad_request");
    const gate = await passGate(request, deps, params, { endpoint: "assignments", serverOnly: true });
    if (!gate.ok) {
      const headers = gate.prepared ? (await changeBudget(deps, gate.prepared.org.id, false)).headers : undefined;
      return refuse(gate.reason, {}, headers);
    }
    const { key, org } = gate.prepared;
    const context: WriteGate = { orgId: org.id, verifiedDomains: org.verified_domains, who: `${key.name} (API key)` };
    if (request.method === "POST" && !isOne(params.history)) {
      return isOne(params.recheck) ? recheckAssignment(deps, params, context, timeoutMs) : changeAssignment(deps, params, context);
    }
    return read(deps, params, org.id);
  };
}

async function read(deps: IngressDeps, params: Params, orgId: number): Promise<HttpReply> {
  const { headers } = await changeBudget(deps, orgId, false);
  const now = deps.clock.now();
  const forDomainRaw = str(params, "for_domain") ?? "";
  const forDomain = forDomainRaw === "" ? undefined : (normalizeDomain(forDomainRaw) ?? forDomainRaw.toLowerCase());
  if (isOne(params.history)) {
    const findingKey = str(params, "finding_key") ?? "";
    const row = forDomain && findingKey ? await findAssignment(deps.db, orgId, forDomain, findingKey) : null;
    if (!row) return refuse("not_found", {}, headers);
    const [history, notes] = await Promise.all([historyOf(deps.db, row.id), notesOf(deps.db, row.id)]);
    return ok(
      { assignment: assignmentView(row, now), history: history.map(historyView), notes: notes.map(noteView), ts: deps.clock.nowSeconds() },
      200,
      headers,
    );
  }
  const status = str(params, "status") ?? "";
  let statuses: readonly AssignmentStatus[];
  if (status === "") statuses = ["open", "in_progress"];
  else if (status === "all") statuses = ASSIGNMENT_STATUSES;
  else if (isAssignmentStatus(status)) statuses = [status];
  else return refuse("unknown_status", {}, headers);
  const ownerEmail = str(params, "owner") ?? "";
  let ownerId: number | undefined;
  if (ownerEmail !== "") {
    const member = await findMemberByEmail(deps.db, orgId, ownerEmail);
    if (!member) return refuse("unknown_owner", {}, headers);
    ownerId = member.id;
  }
  const rows = await listAssignments(deps.readDb, orgId, {
    statuses,
    domain: forDomain,
    ownerId,
    overdueOnly: isOne(params.overdue),
    today: dateOf(now),
    limit: MAX_ASSIGNMENTS,
  });
  return ok({ count: rows.length, assignments: rows.map((r) => assignmentView(r, now)), ts: deps.clock.nowSeconds() }, 200, headers);
}
