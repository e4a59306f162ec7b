import { recordActivity, windowEnd, findOrg, lockOrg, PLANS } from "../../shared/accounts/index.js";
import { DEFAULT_DIFFICULTY, MAX_DIFFICULTY } from "../../shared/botcheck/index.js";
import { sha256 } from "../../shared/platform/crypto/hash.js";
import { issueKey } from "../../shared/platform/crypto/key-format.js";
import {
  countLiveKeys,
  findKey,
  insertKey,
  listKeysOfOrg,
  setKeyStatus,
  updateKeySettings,
  type KeyRow,
  type KeySettings,
} from "../../shared/verify/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { isOneOf } from "../../shared/platform/one-of.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { check, idParam, iso, parseTime, validator, type AdminHandler } from "./common.js";
import { keyDetails } from "./key-view.js";

const stringList = (format?: string, maxItems = 256) => ({
  type: "array",
  maxItems,
  uniqueItems: false,
  items: format ? { type: "string", format, maxLength: 64 } : { type: "string", minLength: 1, maxLength: 64 },
});

const settingsProperties = {
  name: { type: "string", minLength: 1, maxLength: 200 },
  domain: { anyOf: [{ type: "string", format: "domain" }, { type: "null" }] },
  environment: { type: "string", enum: ["production", "staging", "development"] },
  industry: { type: "string", maxLength: 100 },
  scopes: { ...stringList(undefined, 64), items: { type: "string", pattern: "^[A-Za-z0-9_.:-]{1,64}$" } },
  ip_allow: stringList("cidr"),
  ip_deny: stringList("cidr"),
  ip_binding: { type: "boolean" },
  countries_allow: stringList("country"),
  countries_block: stringList("country"),
  rate_per_minute: { type: "integer", minimum: 1, maximum: 10_000_000 },
  rate_per_source_per_minute: { anyOf: [{ type: "integer", minimum: 1, maximum: 10_000_000 }, { type: "null" }] },
  is_trial: { type: "boolean" },
  expires_at: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
  botcheck: {
    type: "object",
    properties: {
      enabled: { type: "boolean" },
      hold_ms: { type: "integer", minimum: 0, maximum: 60_000 },
      allow_desktop: { type: "boolean" },
      allow_tablet: { type: "boolean" },
      allow_mobile: { type: "boolean" },
      blocked_url: { anyOf: [{ type: "string", format: "http-url", maxLength: 2048 }, { type: "null" }] },
      difficulty: { type: "integer", minimum: 0, maximum: MAX_DIFFICULTY },
    },
    additionalProperties: false,
  },
  firewall: { anyOf: [{ type: "object", maxProperties: 64 }, { type: "null" }] },
  content_origin: { anyOf: [{ type: "string", format: "http-url", maxLength: 2048 }, { type: "null" }] },
} satisfies Record<keyof KeySettings, object>;

type KeyBody = Partial<Omit<KeySettings, "botcheck">> & { kind?: "client" | "server"; botcheck?: Partial<KeySettings["botcheck"]> };

export const createBody = validator<KeyBody & { name: string; kind: "client" | "server" }>({
  type: "object",
  required: ["name", "kind"],
  properties: { ...settingsProperties, kind: { type: "string", enum: ["client", "server"] } },
  additionalProperties: false,
});

export const patchBody = validator<KeyBody>({
  type: "object",
  properties: settingsProperties,
  additionalProperties: false,
});

const BOTCHECK_DEFAULTS = {
  enabled: false,
  hold_ms: 1500,
  allow_desktop: true,
  allow_tablet: true,
  allow_mobile: true,
  blocked_url: null,
  difficulty: DEFAULT_DIFFICULTY,
};

function settingsOf(body: KeyBody, base?: KeyRow): Partial<KeySettings> {
  const out: Partial<KeySettings> = {};
  for (const [field, value] of Object.entries(body)) {
    if (field === "kind") continue;
    (out as Record<string, unknown>)[field] = value;
  }
  if (body.domain) out.domain = normalizeDomain(body.domain);
  if (body.expires_at) out.expires_at = new Date(parseTime(body.expires_at)).toISOString();
  if (body.countries_allow) out.countries_allow = [...new Set(body.countries_allow)];
  if (body.countries_block) out.countries_block = [...new Set(body.countries_block)];
  if (body.botcheck) out.botcheck = { ...BOTCHECK_DEFAULTS, ...(base?.botcheck ?? {}), ...body.botcheck };
  return out;
}

async function details(deps: IngressDeps, key: KeyRow) {
  const org = await findOrg(deps.db, key.org_id);
  if (!org) throw new Error(`key ${key.id} has no organization`);
  return keyDetails(key, org, deps.clock.now());
}

export const createKey: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null) return refuse("not_found");
  const input = check(createBody, body);
  if ("reply" in input) return input.reply;
  const v = input.value;
  if (v.kind === "client" && !v.domain) return refuseField("missing_domain", "client keys are locked to a domain");
  const now = deps.clock.now();
  const settings: KeySettings = {
    name: v.name,
    domain: null,
    environment: "production",
    industry: "",
    scopes: [],
    ip_allow: [],
    ip_deny: [],
    ip_binding: false,
    countries_allow: [],
    countries_block: [],
    rate_per_minute: 600,
    rate_per_source_per_minute: null,
    is_trial: false,
    expires_at: null,
    botcheck: { ...BOTCHECK_DEFAULTS },
    firewall: null,
    content_origin: null,
    ...settingsOf(v),
  };
  const fresh = issueKey(v.kind, deps.config.environment === "production");
  const result = await transaction(deps.db, async (tx) => {
    const org = await lockOrg(tx, orgId);
    if (!org) return "not_found" as const;
    const limit = PLANS[org.plan].keys;
    if (limit !== null && (await countLiveKeys(tx, orgId)) >= limit) return "key_limit_reached" as const;
    const row = await insertKey(tx, { orgId, hash: sha256(fresh.key), prefix: fresh.prefix, kind: v.kind, settings, nowMs: now });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "team_security",
      action: `${v.kind === "client" ? "Client" : "Server"} key "${row.name}" created`,
      actionCode: "key.created",
      domain: row.domain,
      detail: { key_id: row.id, prefix: row.prefix },
    });
    return row;
  });
  if (typeof result === "string") return refuse(result);
  await deps.projector.keyChanged(result.id);
  return ok({ key: fresh.key, details: await details(deps, result) }, 201);
};

export const getKey: AdminHandler = async (_request, deps, params) => {
  const id = idParam(params, "id");
  const key = id === null ? null : await findKey(deps.db, id);
  if (!key) return refuse("not_found");
  return ok({ details: await details(deps, key) });
};

const KEY_STATUSES = ["active", "suspended", "revoked", "expired"] as const;

/** GET /orgs/:org/keys: the details of each key (never the key), with last_used_at; filters status and kind. */
export const listKeys: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  const org = orgId === null ? null : await findOrg(deps.db, orgId);
  if (!org) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const query = new URLSearchParams(request.query);
  const status = query.get("status") || undefined;
  if (status !== undefined && !isOneOf(KEY_STATUSES, status))
    return refuseField("bad_status", `status must be one of ${KEY_STATUSES.join(", ")}`);
  const kind = query.get("kind") || undefined;
  if (kind !== undefined && kind !== "client" && kind !== "server") return refuseField("bad_kind", "kind must be client or server");
  const now = deps.clock.now();
  const windowEndMs = windowEnd({ cycleAnchorMs: org.cycle_anchor.getTime(), lapsedAtMs: org.lapsed_at?.getTime() ?? null }, now);
  const { total, rows } = await listKeysOfOrg(deps.db, org.id, {
    ...paging,
    status: status as (typeof KEY_STATUSES)[number] | undefined,
    kind,
    nowMs: now,
    windowEndMs,
  });
  return ok({
    keys: rows.map((row) => ({ ...keyDetails(row, org, now), last_used_at: iso(row.last_used_at) })),
    ...pageFields(paging, total),
  });
};

export const patchKey: AdminHandler = async (_request, deps, params, body, caller) => {
  const id = idParam(params, "id");
  const current = id === null ? null : await findKey(deps.db, id);
  if (!current || current.status === "revoked") return refuse("not_found");
  const input = check(patchBody, body);
  if ("reply" in input) return input.reply;
  if (current.kind === "client" && "domain" in input.value && !input.value.domain) {
    return refuseField("bad_domain", "client keys are locked to a domain");
  }
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    const updated = await updateKeySettings(tx, current.id, settingsOf(input.value, current), now);
    if (updated) {
      await recordActivity(tx, {
        orgId: updated.org_id,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "team_security",
        action: `Key "${updated.name}" settings changed`,
        actionCode: "key.updated",
        domain: updated.domain,
        detail: { key_id: updated.id, fields: Object.keys(input.value) },
      });
    }
    return updated;
  });
  if (!row) return refuse("not_found");
  await deps.projector.keyChanged(row.id);
  return ok({ details: await details(deps, row) });
};

const TRANSITIONS = {
  suspend: { status: "suspended", code: "key.suspended", words: "suspended" },
  resume: { status: "active", code: "key.resumed", words: "resumed" },
  revoke: { status: "revoked", code: "key.revoked", words: "revoked" },
} as const;

export function keyTransition(action: keyof typeof TRANSITIONS): AdminHandler {
  const t = TRANSITIONS[action];
  return async (_request, deps, params, _body, caller) => {
    const id = idParam(params, "id");
    const current = id === null ? null : await findKey(deps.db, id);
    if (current?.status === "revoked") {
      // A retry after a failed projection: the key is revoked in PostgreSQL; make sure Redis knows.
      await deps.projector.keyChanged(current.id);
      return refuse("not_found");
    }
    if (!current) return refuse("not_found");
    const now = deps.clock.now();
    const row = await transaction(deps.db, async (tx) => {
      const updated = await setKeyStatus(tx, current.id, t.status, now, caller.who);
      if (updated) {
        await recordActivity(tx, {
          orgId: updated.org_id,
          atMs: now,
          who: caller.who,
          via: "admin",
          group: "team_security",
          action: `Key "${updated.name}" ${t.words}`,
          actionCode: t.code,
          domain: updated.domain,
          detail: { key_id: updated.id },
        });
      }
      return updated;
    });
    if (!row) return refuse("not_found");
    await deps.projector.keyChanged(row.id);
    return ok({ details: await details(deps, row) });
  };
}

/** Rotation (with its grace period) has a file of its own. */
export { rotateKey } from "./key-rotation.js";
