import { ACTIVITY_GROUPS, type ActivityGroup, listActivity, type ActivityRow } from "../../shared/accounts/index.js";
import { isOneOf } from "../../shared/platform/one-of.js";
import { isIsoDate, normalizeDomain, unstorableField } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { readPaging } from "../paging.js";
import { readParams, str } from "../params.js";
import { ok, refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { passGate } from "./gate.js";
import { activityParams } from "./schemas.js";

/** interface.md 2.8: never an address (the table has none). `via` says whether it was made through the API. */
function entryView(row: ActivityRow) {
  return {
    time: row.at.toISOString().replace(/\.\d{3}Z$/, "Z"),
    who: row.who,
    action: row.action,
    action_code: row.action_code,
    group: row.grp,
    via: row.via,
    domain: row.domain,
    detail: row.detail,
  };
}

/** activity.php (interface.md 4.9): server keys only, newest first, paged. */
export async function activity(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const params = readParams(request);
  // NUL or a lone surrogate would reach PostgreSQL's text comparisons: a 400, never a 500.
  if (params === null || !activityParams(params) || unstorableField(params) !== null) return refuse("bad_request");
  const gate = await passGate(request, deps, params, { endpoint: "activity", serverOnly: true });
  if (!gate.ok) return refuse(gate.reason);
  const from = str(params, "from") ?? "";
  if (from !== "" && !isIsoDate(from)) return refuse("bad_from");
  const to = str(params, "to") ?? "";
  if (to !== "" && !isIsoDate(to)) return refuse("bad_to");
  const group = str(params, "group") ?? "";
  if (group !== "" && !isOneOf(ACTIVITY_GROUPS, group)) return refuse("unknown_group");
  const paging = readPaging(str(params, "limit"), str(params, "page"));
  if ("refused" in paging) return refuse(paging.refused);
  const { limit, page } = paging;
  const forDomainRaw = str(params, "for_domain") ?? "";
  const forDomain = forDomainRaw === "" ? undefined : (normalizeDomain(forDomainRaw) ?? forDomainRaw.toLowerCase());
  const { total, rows } = await listActivity(deps.readDb, gate.prepared.org.id, {
    from: from || undefined,
    to: to || undefined,
    group: (group || undefined) as ActivityGroup | undefined,
    domain: forDomain,
    limit,
    offset: paging.offset,
  });
  return ok({ total, page, has_more: page * limit < total, activity: rows.map(entryView), ts: deps.clock.nowSeconds() });
}
