import {
  type Scope,
  newOrgToken,
  recordActivity,
  countLiveTokens,
  findOrg,
  insertToken,
  liveTokens,
  revokeToken,
  type TokenRow,
} from "../../shared/accounts/index.js";
import { sha256 } from "../../shared/platform/crypto/hash.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, parseTime, validator, type AdminHandler } from "./common.js";

/** Organization tokens (operator-api.md section 5, docs/accounts.md): shown once, SHA-256 at rest. */

export const tokenBody = validator<{ name: string; scopes: Scope[]; expires_at?: string | null }>({
  type: "object",
  required: ["name", "scopes"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 100, pattern: "\\S" },
    scopes: { type: "array", minItems: 1, maxItems: 2, uniqueItems: true, items: { type: "string", enum: ["read", "write"] } },
    expires_at: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
  },
  additionalProperties: false,
});

export function tokenDetails(row: TokenRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: row.prefix,
    created_at: iso(row.created_at),
    created_by: row.created_by,
    last_used_at: iso(row.last_used_at),
    expires_at: iso(row.expires_at),
  };
}

export const createToken: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const input = check(tokenBody, body);
  if ("reply" in input) return input.reply;
  // Two shapes only: read, or read and write (a write-only token would be refused its own reads).
  if (!input.value.scopes.includes("read")) return refuseField("bad_scopes", 'scopes must be ["read"] or ["read","write"]');
  const scopes: Scope[] = input.value.scopes.includes("write") ? ["read", "write"] : ["read"];
  const now = deps.clock.now();
  const expiresMs = input.value.expires_at ? parseTime(input.value.expires_at) : null;
  if (expiresMs !== null && expiresMs <= now) return refuseField("bad_expires_at", "expires_at must be in the future");
  const fresh = newOrgToken();
  const row = await transaction(deps.db, async (tx) => {
    if (await atOrgLimit(tx, orgId, "tokens", () => countLiveTokens(tx, orgId, now))) return null;
    const created = await insertToken(tx, {
      orgId,
      name: input.value.name,
      hash: sha256(fresh.token),
      prefix: fresh.prefix,
      scopes,
      createdBy: caller.who,
      createdByMember: caller.principal.kind === "member" ? caller.principal.memberId : null,
      nowMs: now,
      expiresMs,
    });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "team_security",
      action: `Token "${created.name}" created (${scopes.join(", ")})`,
      actionCode: "token.created",
      detail: { token_id: created.id, name: created.name, prefix: created.prefix, scopes, expires_at: iso(created.expires_at) },
    });
    return created;
  });
  if (row === null) return limitReached("tokens");
  return ok({ token: fresh.token, details: tokenDetails(row) }, 201);
};

export const listTokens: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await liveTokens(deps.db, orgId, deps.clock.now(), paging);
  return ok({ tokens: rows.map(tokenDetails), ...pageFields(paging, total) });
};

export const removeToken: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null) return refuse("not_found");
  const now = deps.clock.now();
  const revoked = await transaction(deps.db, async (tx) => {
    const row = await revokeToken(tx, orgId, id, caller.who, now);
    if (!row) return null;
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "team_security",
      action: `Token "${row.name}" revoked`,
      actionCode: "token.revoked",
      detail: { token_id: row.id, name: row.name, prefix: row.prefix },
    });
    return row;
  });
  if (!revoked) return refuse("not_found");
  return ok({ revoked: { ...tokenDetails(revoked), revoked_at: iso(revoked.revoked_at) } });
};
