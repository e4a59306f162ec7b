import {
  cancelMaintenance,
  createMaintenance,
  findMaintenance,
  latestMaintenance,
  updateMaintenance,
  type ServiceKey,
  maintenanceRecord,
} from "../../shared/status/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { ok, refuse, refuseField } from "../reply.js";
import { check, idParam, parseTime, validator, type AdminHandler } from "./common.js";
import { AFFECTS_SCHEMA, invalidateStatus, limitOf, recordStatusActivity } from "./status.js";

/**
 * Planned maintenance (operator-api.md "Status page"; docs/status.md): create, update,
 * cancel, list. A window must end after it starts, and a new one must not be over
 * already. A cancelled window, or one that is over, cannot be changed (409 conflict).
 */

const fields = {
  title: { type: "string", minLength: 1, maxLength: 200, pattern: "\\S" },
  body: { type: "string", maxLength: 10_000 },
  affects: AFFECTS_SCHEMA,
  starts_at: { type: "string", format: "date-time" },
  ends_at: { type: "string", format: "date-time" },
};

interface MaintenanceInput {
  title: string;
  body: string;
  affects: ServiceKey[];
  starts_at: string;
  ends_at: string;
}

export const createBody = validator<MaintenanceInput>({
  type: "object",
  required: ["title", "starts_at", "ends_at"],
  properties: { ...fields, body: { ...fields.body, default: "" }, affects: { ...AFFECTS_SCHEMA, default: [] } },
  additionalProperties: false,
});

export const patchBody = validator<Partial<MaintenanceInput>>({
  type: "object",
  minProperties: 1,
  properties: fields,
  additionalProperties: false,
});

export const createStatusMaintenance: AdminHandler = async (_request, deps, _params, body) => {
  const input = check(createBody, body);
  if ("reply" in input) return input.reply;
  const startsMs = parseTime(input.value.starts_at);
  const endsMs = parseTime(input.value.ends_at);
  const now = deps.clock.now();
  if (endsMs <= startsMs) return refuseField("bad_ends_at", "ends_at must be after starts_at");
  if (endsMs <= now) return refuseField("bad_ends_at", "the window is already over");
  const row = await transaction(deps.db, async (tx) => {
    const created = await createMaintenance(tx, {
      title: input.value.title.trim(),
      body: input.value.body,
      affects: input.value.affects,
      startsMs,
      endsMs,
      nowMs: now,
    });
    await recordStatusActivity(tx, now, `Maintenance planned: ${created.title}`, "status.maintenance_created", { maintenance: created.id });
    return created;
  });
  await invalidateStatus(deps);
  return ok({ maintenance: maintenanceRecord(row) }, 201);
};

export const patchStatusMaintenance: AdminHandler = async (_request, deps, params, body) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const input = check(patchBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const result = await transaction(deps.db, async (tx) => {
    const current = await findMaintenance(tx, id, true);
    if (!current) return refuse("not_found");
    if (current.cancelled_at !== null) return refuse("conflict", { detail: "the maintenance was cancelled" });
    if (current.ends_at.getTime() <= now) return refuse("conflict", { detail: "the maintenance is over" });
    const next = {
      title: input.value.title?.trim() ?? current.title,
      body: input.value.body ?? current.body,
      affects: input.value.affects ?? current.affects,
      startsMs: input.value.starts_at ? parseTime(input.value.starts_at) : current.starts_at.getTime(),
      endsMs: input.value.ends_at ? parseTime(input.value.ends_at) : current.ends_at.getTime(),
    };
    if (next.endsMs <= next.startsMs) return refuseField("bad_ends_at", "ends_at must be after starts_at");
    const updated = await updateMaintenance(tx, id, next, now);
    await recordStatusActivity(tx, now, `Maintenance ${id} updated`, "status.maintenance_updated", {
      maintenance: id,
      fields: Object.keys(input.value),
    });
    return ok({ maintenance: maintenanceRecord(updated) });
  });
  if (result.status === 200) await invalidateStatus(deps);
  return result;
};

export const cancelStatusMaintenance: AdminHandler = async (_request, deps, params) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const now = deps.clock.now();
  const result = await transaction(deps.db, async (tx) => {
    const current = await findMaintenance(tx, id, true);
    if (!current) return refuse("not_found");
    if (current.cancelled_at !== null) return refuse("conflict", { detail: "the maintenance was already cancelled" });
    if (current.ends_at.getTime() <= now) return refuse("conflict", { detail: "the maintenance is over" });
    const cancelled = await cancelMaintenance(tx, id, now);
    await recordStatusActivity(tx, now, `Maintenance ${id} cancelled`, "status.maintenance_cancelled", { maintenance: id });
    return ok({ maintenance: maintenanceRecord(cancelled) });
  });
  if (result.status === 200) await invalidateStatus(deps);
  return result;
};

export const getStatusMaintenance: AdminHandler = async (_request, deps, params) => {
  const id = idParam(params, "id");
  const row = id === null ? null : await findMaintenance(deps.db, id);
  return row ? ok({ maintenance: maintenanceRecord(row) }) : refuse("not_found");
};

export const listStatusMaintenance: AdminHandler = async (request, deps) => {
  const limit = limitOf(request);
  if (limit === null) return refuseField("bad_limit", "limit is 1 to 500");
  return ok({ maintenance: (await latestMaintenance(deps.db, limit)).map(maintenanceRecord) });
};
