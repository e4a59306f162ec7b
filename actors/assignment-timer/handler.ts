import { recordActivity } from "../../shared/accounts/index.js";
import {
  assignmentById,
  insertHistory,
  claimCrossing,
  claimRisk,
  crossingCandidates,
  riskCandidates,
  type CrossingRules,
  type FindingCrossing,
  type RiskCrossing,
  riskFindingFields,
  dateOf,
  daysOverdue,
  recordMove,
  targetDate,
  type Move,
  type AssignmentRow,
} from "../../shared/findings/index.js";
import { insertEvent } from "../../shared/events/index.js";
import { transaction, type Pool } from "../../shared/platform/db/pool.js";
import { ESCALATE_AFTER_DAYS, NEAR_TARGET_DAYS, RISK_EXPIRING_DAYS, TIMER_BATCH } from "./thresholds.js";

export interface TimerDeps {
  db: Pool;
  nowMs: number;
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The automatic move a crossing makes: history text, event and activity. */
function moveOf(crossing: FindingCrossing, row: AssignmentRow, nowMs: number): Omit<Move, "row" | "atMs" | "who" | "via"> {
  const name = `${row.finding_key} on ${row.domain}`;
  if (crossing === "overdue") {
    return {
      what: `overdue: due ${row.due_at}`,
      code: "finding.overdue",
      event: { type: "finding.overdue", extra: { days_overdue: daysOverdue(row.due_at ?? dateOf(nowMs), nowMs) } },
      activity: { group: "ownership", action: `${name} is overdue (due ${row.due_at})` },
    };
  }
  if (crossing === "escalated") {
    const days = daysOverdue(row.due_at ?? dateOf(nowMs), nowMs);
    return {
      what: `escalated: ${days} days overdue`,
      code: "finding.escalated",
      event: { type: "finding.escalated", extra: { days_overdue: days } },
      activity: { group: "ownership", action: `${name} escalated: ${days} days overdue` },
      detail: { days_overdue: days },
    };
  }
  const target = targetDate(row);
  return {
    what: `near its fix-time target (${target})`,
    code: "finding.near_target",
    event: { type: "finding.near_target", extra: { target_date: target } },
    activity: { group: "ownership", action: `${name} is near its fix-time target (${target})` },
    detail: { target_date: target },
  };
}

async function findingCrossings(deps: TimerDeps, crossing: FindingCrossing, rules: CrossingRules): Promise<number> {
  let emitted = 0;
  for (const id of await crossingCandidates(deps.db, crossing, rules, TIMER_BATCH)) {
    const done = await transaction(deps.db, async (tx) => {
      if (!(await claimCrossing(tx, crossing, id, rules))) return false;
      const row = await assignmentById(tx, id);
      if (!row) return false;
      await recordMove(tx, { row, atMs: deps.nowMs, who: "system", via: "system", ...moveOf(crossing, row, deps.nowMs) });
      return true;
    });
    if (done) emitted++;
  }
  return emitted;
}

async function riskCrossings(deps: TimerDeps, crossing: RiskCrossing): Promise<number> {
  let emitted = 0;
  for (const id of await riskCandidates(deps.db, crossing, deps.nowMs, RISK_EXPIRING_DAYS, TIMER_BATCH)) {
    const done = await transaction(deps.db, async (tx) => {
      const risk = await claimRisk(tx, crossing, id, deps.nowMs, RISK_EXPIRING_DAYS);
      if (!risk) return false;
      const { fields, assignmentId } = await riskFindingFields(tx, risk.org_id, risk.domain, risk.finding_key);
      const type = crossing === "expiring" ? "risk.expiring" : "risk.expired";
      const words = crossing === "expiring" ? `expires on ${dateOf(risk.expires_at.getTime())}` : "expired";
      if (assignmentId !== null) {
        await insertHistory(tx, {
          assignmentId,
          atMs: deps.nowMs,
          who: "system",
          what: `risk acceptance ${words}`,
          detail: { code: type, automatic: true },
        });
      }
      await insertEvent(tx, {
        orgId: risk.org_id,
        type,
        timeMs: deps.nowMs,
        domain: risk.domain,
        payload: { ...fields, note: risk.note, acked_at: iso(risk.acked_at), expires_at: iso(risk.expires_at) },
      });
      await recordActivity(tx, {
        orgId: risk.org_id,
        atMs: deps.nowMs,
        who: "system",
        via: "system",
        group: "risks",
        domain: risk.domain,
        action: `Risk acceptance of ${risk.finding_key} ${words}`,
        actionCode: type,
        detail: { finding_key: risk.finding_key, expires_at: iso(risk.expires_at) },
      });
      return true;
    });
    if (done) emitted++;
  }
  return emitted;
}

/**
 * One run of the timer: every crossing reached at `nowMs` and not told yet. Decided from
 * the clock and the stored columns only, never from how often it ran.
 */
export async function runTimers(deps: TimerDeps): Promise<Record<string, number>> {
  const rules: CrossingRules = {
    nowMs: deps.nowMs,
    today: dateOf(deps.nowMs),
    nearTargetDays: NEAR_TARGET_DAYS,
    escalateAfterDays: ESCALATE_AFTER_DAYS,
  };
  return {
    overdue: await findingCrossings(deps, "overdue", rules),
    near_target: await findingCrossings(deps, "near_target", rules),
    escalated: await findingCrossings(deps, "escalated", rules),
    expiring: await riskCrossings(deps, "expiring"),
    expired: await riskCrossings(deps, "expired"),
  };
}
