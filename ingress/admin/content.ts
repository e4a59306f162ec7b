import { recordActivity, findOrg } from "../../shared/accounts/index.js";
import { seal } from "../../shared/platform/crypto/seal.js";
import {
  CONTENT_TYPES,
  countContent,
  countSecrets,
  deleteContent,
  deleteSecret,
  listContent,
  listSecretNames,
  secretAad,
  upsertContent,
  upsertSecret,
  type ContentType,
} from "../../shared/verify/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, validator, type AdminHandler } from "./common.js";

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_VALUE_BYTES = 64 * 1024;

export const contentBody = validator<{ type: ContentType; value: unknown }>({
  type: "object",
  required: ["type", "value"],
  properties: { type: { type: "string", enum: CONTENT_TYPES }, value: {} },
  additionalProperties: false,
});

export const secretBody = validator<{ value: string }>({
  type: "object",
  required: ["value"],
  properties: { value: { type: "string", minLength: 1, maxLength: MAX_VALUE_BYTES } },
  additionalProperties: false,
});

/** The value must match its declared type; json accepts any JSON value. */
function typedValue(type: ContentType, value: unknown): { ok: true; value: unknown } | { ok: false } {
  switch (type) {
    case "text":
    case "html":
      return typeof value === "string" ? { ok: true, value } : { ok: false };
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? { ok: true, value } : { ok: false };
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : { ok: false };
    case "json":
      return { ok: true, value };
  }
}

export const putContent: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const contentKey = params.content_key ?? "";
  if (!NAME.test(contentKey)) return refuseField("bad_content_key");
  const input = check(contentBody, body);
  if ("reply" in input) return input.reply;
  const typed = typedValue(input.value.type, input.value.value);
  if (!typed.ok) return refuseField("bad_value", `value is not of type ${input.value.type}`);
  if (Buffer.byteLength(JSON.stringify(typed.value)) > MAX_VALUE_BYTES) return refuseField("bad_value", "value exceeds 64 KiB");
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    // A replaced item takes no new place.
    const full = await atOrgLimit(tx, orgId, "content", async () => {
      const held = await countContent(tx, orgId, contentKey);
      return held.exists ? 0 : held.n;
    });
    if (full) return null;
    const saved = await upsertContent(tx, { orgId, contentKey, type: input.value.type, value: typed.value, nowMs: now });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "settings",
      action: `Content "${contentKey}" published`,
      actionCode: "content.updated",
      detail: { content_key: contentKey, type: saved.type },
    });
    return saved;
  });
  if (row === null) return limitReached("content");
  await deps.projector.contentChanged(orgId);
  return ok({ content: { [contentKey]: { type: row.type, value: row.value, updated_at: iso(row.updated_at) } } });
};

export const removeContent: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const contentKey = params.content_key ?? "";
  if (orgId === null || !NAME.test(contentKey)) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    const done = await deleteContent(tx, orgId, contentKey);
    if (done) {
      await recordActivity(tx, {
        orgId,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "settings",
        action: `Content "${contentKey}" removed`,
        actionCode: "content.deleted",
        detail: { content_key: contentKey },
      });
    }
    return done;
  });
  // A retry after a failed projection answers 404, but projects again first.
  await deps.projector.contentChanged(orgId);
  if (!removed) return refuse("not_found");
  return ok({ deleted: contentKey });
};

export const putSecret: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const name = params.name ?? "";
  if (!NAME.test(name)) return refuseField("bad_name");
  const input = check(secretBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    const full = await atOrgLimit(tx, orgId, "secrets", async () => {
      const held = await countSecrets(tx, orgId, name);
      return held.exists ? 0 : held.n;
    });
    if (full) return null;
    const saved = await upsertSecret(tx, {
      orgId,
      name,
      sealed: seal(deps.masterSecret, input.value.value, secretAad(orgId, name)),
      nowMs: now,
    });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "team_security",
      action: `Secret "${name}" set`,
      actionCode: "secret.updated",
      detail: { name },
    });
    return saved;
  });
  if (row === null) return limitReached("secrets");
  await deps.projector.contentChanged(orgId);
  return ok({ secret: { name: row.name, updated_at: iso(row.updated_at) } });
};

export const removeSecret: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const name = params.name ?? "";
  if (orgId === null || !NAME.test(name)) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    const done = await deleteSecret(tx, orgId, name);
    if (done) {
      await recordActivity(tx, {
        orgId,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "team_security",
        action: `Secret "${name}" deleted`,
        actionCode: "secret.deleted",
        detail: { name },
      });
    }
    return done;
  });
  // A retry after a failed projection answers 404, but projects again first.
  await deps.projector.contentChanged(orgId);
  if (!removed) return refuse("not_found");
  return ok({ deleted: name });
};

/** GET /orgs/:org/content: the items of interface.md 2.3 as an array, most recently changed first. */
export const listContentRoute: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listContent(deps.db, orgId, paging);
  return ok({
    content: rows.map((row) => ({ content_key: row.content_key, type: row.type, value: row.value, updated_at: iso(row.updated_at) })),
    ...pageFields(paging, total),
  });
};

/** GET /orgs/:org/secrets: names and update times, never a value. */
export const listSecretsRoute: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listSecretNames(deps.db, orgId, paging);
  return ok({ secrets: rows.map((row) => ({ name: row.name, updated_at: iso(row.updated_at) })), ...pageFields(paging, total) });
};
