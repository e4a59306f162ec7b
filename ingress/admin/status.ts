import { recordActivity } from "../../shared/accounts/index.js";
import {
  INCIDENT_STATUSES,
  addIncidentUpdate,
  createIncident,
  findIncident,
  latestIncidents,
  patchIncident,
  type Impact,
  type IncidentStatus,
  DEFAULT_SERVICE_NAMES,
  SERVICE_KEYS,
  listServices,
  recentChecks,
  statusActivity,
  upsertService,
  type CheckRow,
  type ServiceKey,
  type ServiceRow,
  incidentView,
  iso,
  incidentMoveAllowed,
} from "../../shared/status/index.js";
import { transaction, type Queryable } from "../../shared/platform/db/pool.js";
import { isOneOf } from "../../shared/platform/one-of.js";
import { literalRefusal, outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import type { IngressDeps } from "../deps.js";
import { ok, refuse, refuseField } from "../reply.js";
import type { HttpRequest } from "../types.js";
import { check, idParam, validator, type AdminHandler } from "./common.js";

/**
 * The status page's admin calls (operator-api.md "Status page"; docs/status.md): services,
 * incidents and their updates. Status is deployment-wide: activity rows carry no
 * organization (org_id NULL, group `settings`). Every change drops the cached document so
 * the page shows it on the next read rather than up to a minute later.
 */

export const AFFECTS_SCHEMA = { type: "array", items: { type: "string", enum: SERVICE_KEYS }, uniqueItems: true, maxItems: 3 };
const TITLE = { type: "string", minLength: 1, maxLength: 200, pattern: "\\S" };
const BODY = { type: "string", minLength: 1, maxLength: 10_000, pattern: "\\S" };

export const serviceBody = validator<{ name: string; url: string | null }>({
  type: "object",
  required: ["name", "url"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 100, pattern: "\\S" },
    url: { anyOf: [{ type: "string", format: "http-url", maxLength: 2048 }, { type: "null" }] },
  },
  additionalProperties: false,
});

export const incidentBody = validator<{ title: string; impact: Impact; affects: ServiceKey[]; status: IncidentStatus; body: string }>({
  type: "object",
  required: ["title", "body"],
  properties: {
    title: TITLE,
    impact: { type: "string", enum: ["minor", "major"], default: "minor" },
    affects: { ...AFFECTS_SCHEMA, default: [] },
    status: { type: "string", enum: INCIDENT_STATUSES, default: "investigating" },
    body: BODY,
  },
  additionalProperties: false,
});

export const updateBody = validator<{ status: IncidentStatus; body: string }>({
  type: "object",
  required: ["status", "body"],
  properties: { status: { type: "string", enum: INCIDENT_STATUSES }, body: BODY },
  additionalProperties: false,
});

export const patchBody = validator<{ title?: string; impact?: Impact; affects?: ServiceKey[]; postmortem?: string | null }>({
  type: "object",
  minProperties: 1,
  properties: {
    title: TITLE,
    impact: { type: "string", enum: ["minor", "major"] },
    affects: AFFECTS_SCHEMA,
    postmortem: { anyOf: [{ type: "string", maxLength: 50_000 }, { type: "null" }] },
  },
  additionalProperties: false,
});

/** Status routes are the operator's only (routes.ts), so the operator made the change. */
export async function recordStatusActivity(
  db: Queryable,
  nowMs: number,
  action: string,
  actionCode: string,
  detail: Record<string, unknown>,
) {
  await recordActivity(db, { orgId: null, atMs: nowMs, who: "operator", via: "admin", group: "settings", action, actionCode, detail });
}

/** The cached document is rebuilt on the next read; a Redis hiccup here only delays that by up to a minute. */
export async function invalidateStatus(deps: IngressDeps): Promise<void> {
  await deps.status.invalidate().catch((error: unknown) => deps.logger.warn({ err: error }, "status cache not invalidated"));
}

/** The newest probe of the service: a refused or failed one carries its reason in `error`. */
function probeView(check: CheckRow | undefined) {
  if (!check) return null;
  return { at: iso(check.at), ok: check.ok, status_code: check.status_code, latency_ms: check.latency_ms, error: check.error };
}

function serviceView(key: ServiceKey, row: ServiceRow | undefined, last?: CheckRow) {
  return {
    key,
    name: row?.name ?? DEFAULT_SERVICE_NAMES[key],
    url: row?.url ?? null,
    configured: Boolean(row?.url),
    updated_at: iso(row?.updated_at),
    last_probe: probeView(last),
  };
}

function limitOf(request: HttpRequest): number | null {
  const raw = new URLSearchParams(request.query).get("limit");
  if (raw === null) return 50;
  return /^\d{1,3}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 500 ? Number(raw) : null;
}

export const putService: AdminHandler = async (_request, deps, params, body) => {
  const key = params.service as ServiceKey;
  if (!isOneOf(SERVICE_KEYS, key)) return refuse("not_found", { detail: "service is website, api or dashboard" });
  const input = check(serviceBody, body);
  if ("reply" in input) return input.reply;
  // A literal private address the prober may not reach is refused now, not left to fail every probe.
  const refused =
    input.value.url === null ? null : literalRefusal(new URL(input.value.url).hostname, outboundPolicyOf("probe", deps.config));
  if (refused) return refuseField("bad_url", refused);
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    const saved = await upsertService(tx, key, input.value.name.trim(), input.value.url, now);
    await recordStatusActivity(tx, now, `Status service ${key} set`, "status.service_set", {
      service: key,
      name: saved.name,
      url: saved.url,
    });
    return saved;
  });
  await invalidateStatus(deps);
  return ok({ service: serviceView(key, row) });
};

export const listStatusServices: AdminHandler = async (_request, deps) => {
  const rows = new Map((await listServices(deps.db)).map((r) => [r.key, r]));
  const now = deps.clock.now();
  const last = new Map((await recentChecks(deps.db, 0, now, 1)).map((c) => [c.service, c]));
  return ok({ services: SERVICE_KEYS.map((key) => serviceView(key, rows.get(key), last.get(key))) });
};

export const createStatusIncident: AdminHandler = async (_request, deps, _params, body) => {
  const input = check(incidentBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const incident = await transaction(deps.db, async (tx) => {
    const created = await createIncident(tx, { ...input.value, title: input.value.title.trim(), nowMs: now });
    await recordStatusActivity(tx, now, `Incident opened: ${created.title}`, "status.incident_created", {
      incident: created.id,
      impact: created.impact,
      status: created.status,
    });
    return created;
  });
  await invalidateStatus(deps);
  return ok({ incident: incidentView(incident) }, 201);
};

export const addStatusIncidentUpdate: AdminHandler = async (_request, deps, params, body) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const input = check(updateBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const result = await transaction(deps.db, async (tx) => {
    const current = await findIncident(tx, id, true);
    if (!current) return "missing" as const;
    if (!incidentMoveAllowed(current.status, input.value.status)) return "resolved" as const;
    const updated = await addIncidentUpdate(tx, id, input.value.status, input.value.body, now);
    await recordStatusActivity(tx, now, `Incident ${id} ${input.value.status}`, "status.incident_updated", {
      incident: id,
      from: current.status,
      status: input.value.status,
    });
    return updated;
  });
  if (result === "missing") return refuse("not_found");
  if (result === "resolved") return refuse("conflict", { detail: "the incident is resolved; open a new one for a recurrence" });
  await invalidateStatus(deps);
  return ok({ incident: incidentView(result) }, 201);
};

export const patchStatusIncident: AdminHandler = async (_request, deps, params, body) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const input = check(patchBody, body);
  if ("reply" in input) return input.reply;
  const fields = { ...input.value, ...(input.value.title !== undefined ? { title: input.value.title.trim() } : {}) };
  const now = deps.clock.now();
  const incident = await transaction(deps.db, async (tx) => {
    const patched = await patchIncident(tx, id, fields, now);
    if (!patched) return null;
    await recordStatusActivity(tx, now, `Incident ${id} edited`, "status.incident_edited", { incident: id, fields: Object.keys(fields) });
    return patched;
  });
  if (!incident) return refuse("not_found");
  await invalidateStatus(deps);
  return ok({ incident: incidentView(incident) });
};

export const getStatusIncident: AdminHandler = async (_request, deps, params) => {
  const id = idParam(params, "id");
  const incident = id === null ? null : await findIncident(deps.db, id);
  return incident ? ok({ incident: incidentView(incident) }) : refuse("not_found");
};

export const listStatusIncidents: AdminHandler = async (request, deps) => {
  const limit = limitOf(request);
  if (limit === null) return refuseField("bad_limit", "limit is 1 to 500");
  return ok({ incidents: (await latestIncidents(deps.db, limit)).map(incidentView) });
};

export const listStatusActivity: AdminHandler = async (request, deps) => {
  const limit = limitOf(request);
  if (limit === null) return refuseField("bad_limit", "limit is 1 to 500");
  const rows = await statusActivity(deps.db, limit);
  return ok({
    activity: rows.map((r) => ({ time: iso(r.at), who: r.who, action: r.action, action_code: r.action_code, detail: r.detail })),
  });
};

export { limitOf };
