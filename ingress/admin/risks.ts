import { recordActivity, findOrg } from "../../shared/accounts/index.js";
import {
  countAcceptances,
  insertAcceptance,
  listAcceptances,
  lockDomainRow,
  releaseAcceptance,
  riskFindingFields,
} from "../../shared/findings/index.js";
import { findDomain, type AckRow } from "../../shared/scans/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { insertEvent } from "../../shared/events/index.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, parseTime, validator, type AdminHandler } from "./common.js";

export const FINDING_KEY = /^[a-z0-9_-]{1,32}:[a-z0-9_.-]{1,64}$/;

export const riskBody = validator<{ domain: string; finding_key: string; note?: string; expires_at?: string | null }>({
  type: "object",
  required: ["domain", "finding_key"],
  properties: {
    domain: { type: "string", format: "domain" },
    finding_key: { type: "string", pattern: FINDING_KEY.source },
    note: { type: "string", maxLength: 2000 },
    expires_at: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
  },
  additionalProperties: false,
});

export function acknowledgementView(row: AckRow, nowMs: number) {
  const expired = row.expires_at !== null && row.expires_at.getTime() <= nowMs;
  return { note: row.note, acked_at: iso(row.acked_at), expires_at: iso(row.expires_at), expired };
}

/** Accepts a risk until expires_at; an existing acceptance of the same finding is replaced. */
export const acceptRisk: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null) return refuse("not_found");
  const input = check(riskBody, body);
  if ("reply" in input) return input.reply;
  const domain = normalizeDomain(input.value.domain) ?? "";
  const owned = await findDomain(deps.db, orgId, domain);
  if (!owned) return refuse("not_found", { detail: "the organization has no such domain" });
  const now = deps.clock.now();
  const expiresMs = input.value.expires_at ? parseTime(input.value.expires_at) : null;
  if (expiresMs !== null && expiresMs <= now) return refuseField("bad_expires_at", "expires_at must be in the future");
  const row = await transaction(deps.db, async (tx) => {
    // Two acceptances of one finding at once would both find nothing to release and
    // collide on the one-current-acceptance index: the domain's row lock queues them.
    const findingKey = input.value.finding_key;
    if (await atOrgLimit(tx, orgId, "risks", () => countAcceptances(tx, orgId, domain, findingKey))) return null;
    await lockDomainRow(tx, owned.id);
    await releaseAcceptance(tx, orgId, domain, input.value.finding_key, now);
    const accepted = await insertAcceptance(tx, {
      orgId,
      domain,
      findingKey: input.value.finding_key,
      note: input.value.note ?? "",
      by: caller.who,
      nowMs: now,
      expiresMs,
    });
    const rows = [accepted];
    const { fields } = await riskFindingFields(tx, orgId, domain, input.value.finding_key);
    await insertEvent(tx, {
      orgId,
      type: "risk.accepted",
      timeMs: now,
      domain,
      payload: { ...fields, note: rows[0].note, acked_at: iso(rows[0].acked_at), expires_at: iso(rows[0].expires_at), by: caller.who },
    });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "risks",
      domain,
      action: `Risk accepted for ${input.value.finding_key}`,
      actionCode: "risk.accepted",
      detail: { finding_key: input.value.finding_key, expires_at: iso(rows[0].expires_at) },
    });
    return rows[0];
  });
  if (row === null) return limitReached("risks");
  return ok({ acknowledgement: { domain, finding_key: row.finding_key, ...acknowledgementView(row, now) } }, 201);
};

export const releaseRisk: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const domain = normalizeDomain(params.domain ?? "");
  const findingKey = params.finding_key ?? "";
  if (orgId === null || !domain || !FINDING_KEY.test(findingKey)) return refuse("not_found");
  const now = deps.clock.now();
  const released = await transaction(deps.db, async (tx) => {
    const released = await releaseAcceptance(tx, orgId, domain, findingKey, now);
    if (!released) return null;
    const rows = [released];
    const { fields } = await riskFindingFields(tx, orgId, domain, findingKey);
    await insertEvent(tx, {
      orgId,
      type: "risk.unaccepted",
      timeMs: now,
      domain,
      payload: { ...fields, note: rows[0].note, acked_at: iso(rows[0].acked_at), expires_at: iso(rows[0].expires_at), by: caller.who },
    });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "risks",
      domain,
      action: `Risk acceptance released for ${findingKey}`,
      actionCode: "risk.released",
      detail: { finding_key: findingKey },
    });
    return rows[0];
  });
  if (!released) return refuse("not_found");
  return ok({ released: { domain, finding_key: findingKey, released_at: iso(released.released_at) } });
};

/** GET /orgs/:org/risks: the current acceptances, newest first, each with `expired`. */
export const listRisks: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listAcceptances(deps.db, orgId, paging);
  const now = deps.clock.now();
  return ok({
    risks: rows.map((row) => ({
      id: row.id,
      domain: row.domain,
      finding_key: row.finding_key,
      ...acknowledgementView(row, now),
      acked_by: row.acked_by,
    })),
    ...pageFields(paging, total),
  });
};
