import { findOrg } from "../../shared/accounts/index.js";
import { dailyUsageOfKey, dailyUsageOfOrg, findKey } from "../../shared/verify/index.js";
import { isIsoDate } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { ok, refuse, refuseField } from "../reply.js";
import type { HttpReply } from "../types.js";
import { idParam, type AdminHandler } from "./common.js";

const tally = (): Record<string, number> => Object.create(null) as Record<string, number>;

/** The longest range `GET /orgs/:org/usage` answers, in days (both ends included). */
export const ORG_USAGE_MAX_DAYS = 400;

interface UsageDay {
  day: string;
  calls: number;
  counted: number;
  refused: number;
  by_reason: Record<string, number>;
  by_endpoint: Record<string, number>;
}

/** Rows of (day, endpoint, reason) counts, in day order, folded into one entry per day. */
function byDay(rows: readonly { day: string; endpoint: string; reason: string; counted: number; refused: number; calls: number }[]) {
  const days = new Map<string, UsageDay>();
  for (const row of rows) {
    // Endpoint labels are the callers' text: tallies without a prototype, so `constructor` is a label like any other.
    const entry = days.get(row.day) ?? { day: row.day, calls: 0, counted: 0, refused: 0, by_reason: tally(), by_endpoint: tally() };
    entry.calls += row.calls;
    entry.counted += row.counted;
    entry.refused += row.refused;
    entry.by_reason[row.reason] = (entry.by_reason[row.reason] ?? 0) + row.calls;
    entry.by_endpoint[row.endpoint] = (entry.by_endpoint[row.endpoint] ?? 0) + row.calls;
    days.set(row.day, entry);
  }
  return [...days.values()];
}

/** `from` and `to` of the query (YYYY-MM-DD): by default the service's last 30 days, today included. */
function range(query: URLSearchParams, deps: IngressDeps): { from: string; to: string } | { reply: HttpReply } {
  const today = new Date(deps.clock.now()).toISOString().slice(0, 10);
  const from = query.get("from") ?? new Date(deps.clock.now() - 29 * 86400_000).toISOString().slice(0, 10);
  const to = query.get("to") ?? today;
  if (!isIsoDate(from)) return { reply: refuseField("bad_from") };
  if (!isIsoDate(to)) return { reply: refuseField("bad_to") };
  return { from, to };
}

/** Per-day counts of one key: counted, refused, by reason and by endpoint label. */
export const keyUsage: AdminHandler = async (request, deps, params) => {
  const id = idParam(params, "id");
  const key = id === null ? null : await findKey(deps.db, id);
  if (!key) return refuse("not_found");
  const dates = range(new URLSearchParams(request.query), deps);
  if ("reply" in dates) return dates.reply;
  const rows = await dailyUsageOfKey(deps.db, key.id, dates.from, dates.to);
  return ok({ key_id: key.id, from: dates.from, to: dates.to, usage: byDay(rows) });
};

/**
 * Per-day counts of every key of an organization, summed (revoked keys included), from one
 * aggregate query. A range runs forwards and spans at most ORG_USAGE_MAX_DAYS days; when it
 * does not, the refusal names the end the caller sent (`to` when only `to` was sent, else `from`).
 */
export const orgUsage: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  const org = orgId === null ? null : await findOrg(deps.db, orgId);
  if (!org) return refuse("not_found");
  const query = new URLSearchParams(request.query);
  const dates = range(query, deps);
  if ("reply" in dates) return dates.reply;
  const days = (Date.parse(dates.to) - Date.parse(dates.from)) / 86400_000 + 1;
  if (days < 1 || days > ORG_USAGE_MAX_DAYS) {
    const toBlamed = query.has("to") && !query.has("from");
    const detail =
      days > ORG_USAGE_MAX_DAYS ? `the range spans more than ${ORG_USAGE_MAX_DAYS} days` : toBlamed ? "before from" : "after to";
    return refuseField(toBlamed ? "bad_to" : "bad_from", detail);
  }
  const rows = await dailyUsageOfOrg(deps.db, org.id, dates.from, dates.to);
  return ok({ org_id: org.id, from: dates.from, to: dates.to, usage: byDay(rows) });
};
