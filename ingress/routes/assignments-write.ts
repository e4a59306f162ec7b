import { randomUUID } from "node:crypto";
import { recheckReplySchema, SCAN_STREAM, type ScanJob } from "../../shared/scans/index.js";
import {
  hasScans,
  latestFinding,
  lockAssignment,
  updateAssignment,
  isAssignmentStatus,
  assignmentById,
  type AssignmentChange,
  type AssignmentRow,
  dateOf,
  recordMove,
} from "../../shared/findings/index.js";
import { findMemberByEmail, type MemberRow } from "../../shared/accounts/index.js";
import { transaction, type Queryable } from "../../shared/platform/db/pool.js";
import { isIsoDate, normalizeDomain } from "../../shared/platform/validation.js";
import type { Reason } from "../../shared/platform/reasons.js";
import { ask } from "../ask.js";
import type { IngressDeps } from "../deps.js";
import { FINDING_KEY } from "../admin/risks.js";
import { str, type Params } from "../params.js";
import { ok, refuse } from "../reply.js";
import type { HttpReply } from "../types.js";
import { assignmentView } from "./assignment-view.js";
import { changeBudget, recheckBudget } from "./hourly-budget.js";

export interface WriteGate {
  orgId: number;
  verifiedDomains: readonly string[];
  /** Who the history and activity name: the key, marked as made through the API. */
  who: string;
}

interface Target {
  domain: string;
  findingKey: string;
  finding: string;
  foundMs: number | null;
}

/** for_domain verified by the organization, finding_key well formed and reported by the domain's latest scans. */
async function target(deps: IngressDeps, params: Params, gate: WriteGate): Promise<Target | Reason> {
  const raw = str(params, "for_domain") ?? "";
  if (raw === "") return "missing_for_domain";
  const domain = normalizeDomain(raw);
  if (!domain || !gate.verifiedDomains.includes(domain)) return "domain_not_verified";
  const findingKey = str(params, "finding_key") ?? "";
  if (!FINDING_KEY.test(findingKey)) return "bad_finding_key";
  if (!(await hasScans(deps.db, gate.orgId, domain))) return "unknown_domain";
  const found = await latestFinding(deps.db, gate.orgId, domain, findingKey);
  if (!found) return "unknown_finding";
  return { domain, findingKey, finding: found.label, foundMs: found.first_found_at?.getTime() ?? null };
}

interface Wanted {
  owner?: MemberRow | null;
  status?: AssignmentChange["status"];
  due?: string | null;
}

/** The fields sent, judged; a field left out stays as it is. */
async function wanted(deps: IngressDeps, params: Params, orgId: number): Promise<Wanted | Reason> {
  const out: Wanted = {};
  if (params.owner !== undefined) {
    const email = str(params, "owner");
    if (email === undefined) return "unknown_owner";
    if (email === "") out.owner = null;
    else {
      const member = await findMemberByEmail(deps.db, orgId, email.trim());
      if (!member) return "unknown_owner";
      out.owner = member;
    }
  }
  if (params.status !== undefined) {
    const status = str(params, "status");
    if (!isAssignmentStatus(status)) return "unknown_status";
    out.status = status;
  }
  if (params.due !== undefined) {
    const due = str(params, "due");
    if (due === undefined) return "bad_due";
    if (due === "") out.due = null;
    else {
      if (!isIsoDate(due)) return "bad_due";
      if (due < dateOf(deps.clock.now())) return "due_in_past";
      out.due = due;
    }
  }
  return out;
}

function lock(tx: Queryable, gate: WriteGate, t: Target, nowMs: number) {
  return lockAssignment(tx, {
    orgId: gate.orgId,
    domain: t.domain,
    findingKey: t.findingKey,
    finding: t.finding,
    foundMs: t.foundMs ?? nowMs,
    nowMs,
  });
}

async function reread(tx: Queryable, id: number): Promise<AssignmentRow> {
  const row = await assignmentById(tx, id);
  if (!row) throw new Error("assignment vanished inside its transaction");
  return row;
}

/** POST assignments.php without recheck: one transaction with every record the change makes. */
export async function changeAssignment(deps: IngressDeps, params: Params, gate: WriteGate): Promise<HttpReply> {
  const headersNow = async () => (await changeBudget(deps, gate.orgId, false)).headers;
  const t = await target(deps, params, gate);
  if (typeof t === "string") return refuse(t, {}, await headersNow());
  const want = await wanted(deps, params, gate.orgId);
  if (typeof want === "string") return refuse(want, {}, await headersNow());
  const spent = await changeBudget(deps, gate.orgId, true);
  if (!spent.allowed) return refuse("assignment_rate_limited", {}, spent.headers);
  const now = deps.clock.now();
  const base = { atMs: now, who: gate.who, via: "api" as const };
  const row = await transaction(deps.db, async (tx) => {
    const { row: before } = await lock(tx, gate, t, now);
    const change: AssignmentChange = {};
    if (want.owner !== undefined && (want.owner?.id ?? null) !== before.owner_id) change.ownerId = want.owner?.id ?? null;
    if (want.status !== undefined && want.status !== before.status) change.status = want.status;
    if (want.due !== undefined && want.due !== before.due_at) change.dueAt = want.due;
    if (Object.keys(change).length === 0) return before;
    await updateAssignment(tx, before.id, change, now);
    const after = await reread(tx, before.id);
    const name = `${t.findingKey} on ${t.domain}`;
    if (change.ownerId !== undefined) {
      const owner = after.owner_email ? `${after.owner_name} <${after.owner_email}>` : "nobody";
      const previous = before.owner_email ? { name: before.owner_name ?? "", email: before.owner_email } : null;
      await recordMove(tx, {
        ...base,
        row: after,
        what: `assigned to ${owner}`,
        code: "finding.assigned",
        event: { type: "finding.assigned", extra: { by: gate.who, automatic: false, previous_owner: previous } },
        activity: { group: "ownership", action: `Assigned ${name} to ${owner} (API)` },
        detail: { owner: after.owner_email, previous_owner: before.owner_email },
      });
    }
    if (change.status !== undefined) {
      await recordMove(tx, {
        ...base,
        row: after,
        what: `status changed from ${before.status} to ${after.status}`,
        code: "finding.status_changed",
        event: { type: "finding.status_changed", extra: { from: before.status, by: gate.who } },
        activity: { group: "ownership", action: `Status of ${name} changed from ${before.status} to ${after.status} (API)` },
        detail: { from: before.status, to: after.status },
      });
    }
    if (change.dueAt !== undefined) {
      // Section 6 has no event for a due date alone: history and activity record it.
      await recordMove(tx, {
        ...base,
        row: after,
        what: after.due_at ? `due date set to ${after.due_at}` : "due date cleared",
        code: "finding.due_set",
        activity: {
          group: "ownership",
          action: after.due_at ? `Due date of ${name} set to ${after.due_at} (API)` : `Due date of ${name} cleared (API)`,
        },
        detail: { due_at: after.due_at, previous_due_at: before.due_at },
      });
    }
    return after;
  });
  return ok({ assignment: assignmentView(row, now), ts: deps.clock.nowSeconds() }, 200, spent.headers);
}

/** A re-check passes when its check now passes or has nothing to judge (`info`). */
export function recheckPassed(status: string): boolean {
  return status === "pass" || status === "info";
}

/** POST assignments.php recheck=1: the scanner re-runs the one check (request/reply); a pass marks the finding done. */
export async function recheckAssignment(deps: IngressDeps, params: Params, gate: WriteGate, timeoutMs: number): Promise<HttpReply> {
  const t = await target(deps, params, gate);
  if (typeof t === "string") return refuse(t, {}, (await recheckBudget(deps, gate.orgId, false)).headers);
  const spent = await recheckBudget(deps, gate.orgId, true);
  if (!spent.allowed) return refuse("recheck_rate_limited", {}, spent.headers);
  const job: ScanJob = { job_id: randomUUID(), org_id: gate.orgId, domain: t.domain, trigger: "recheck", finding_key: t.findingKey };
  const answer = await ask(deps, {
    stream: SCAN_STREAM,
    message: job,
    replySchema: recheckReplySchema,
    timeoutMs,
    refusal: { headers: spent.headers },
  });
  if (!answer.ok) return answer.refusal;
  const reply = answer.reply;
  if (!reply.ok) return refuse("scan_failed", {}, spent.headers);
  const checkStatus = reply.finding.status;
  const passed = recheckPassed(checkStatus);
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    const { row: before } = await lock(tx, gate, t, now);
    const name = `${t.findingKey} on ${t.domain}`;
    await recordMove(tx, {
      row: before,
      atMs: now,
      who: gate.who,
      via: "api",
      what: `re-checked: ${checkStatus}`,
      code: "finding.rechecked",
      activity: { group: "ownership", action: `Re-checked ${name}: ${checkStatus} (API)` },
      detail: { check_status: checkStatus, passed },
    });
    if (!passed || before.status === "done") return before;
    await updateAssignment(tx, before.id, { status: "done" }, now);
    const after = await reread(tx, before.id);
    await recordMove(tx, {
      row: after,
      atMs: now,
      who: gate.who,
      via: "api",
      what: `status changed from ${before.status} to done (re-check passed)`,
      code: "finding.status_changed",
      event: { type: "finding.status_changed", extra: { from: before.status, by: gate.who, recheck: true } },
      activity: { group: "ownership", action: `Status of ${name} changed from ${before.status} to done: re-check passed (API)` },
      detail: { from: before.status, to: "done" },
    });
    return after;
  });
  return ok(
    {
      assignment: assignmentView(row, now),
      passed,
      check_status: checkStatus,
      summary: reply.finding.summary,
      ts: deps.clock.nowSeconds(),
    },
    200,
    spent.headers,
  );
}
