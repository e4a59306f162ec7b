import { REASONS } from "../../shared/reasons.js";

/**
 * Answer shapes of the OpenAPI documents. Request shapes are never written here: they are
 * the schemas the routes validate with (routes/schemas.ts, the admin validators). A shape
 * with `additionalProperties: false` is fully described (the test helper fails on a field
 * it lacks); a loose one (`x-loose: true`) names its required fields only.
 */

export type Schema = object;

export const REASON_NAMES = Object.keys(REASONS);

/** Every reason of shared/reasons.ts, with its status, as the enum of `reason`. */
export const reasonSchema: Schema = {
  type: "string",
  enum: REASON_NAMES,
  "x-reasons": Object.fromEntries(Object.entries(REASONS).map(([name, r]) => [name, { status: r.status, counts: r.counts, message: r.message }])),
};

/** Admin refusals also name a field (`bad_<field>`, `missing_<field>`; shared/validation.ts reasonOf). */
export const adminReasonSchema: Schema = {
  anyOf: [{ $ref: "#/components/schemas/Reason" }, { type: "string", pattern: "^(bad|missing)_[A-Za-z0-9_$]+$" }],
};

const loose = (properties: Record<string, Schema>, required: string[]): Schema => ({
  type: "object", properties, required, additionalProperties: true, "x-loose": true,
});
const strict = (properties: Record<string, Schema>, required: string[]): Schema => ({
  type: "object", properties, required, additionalProperties: false,
});

const str = { type: "string" };
const int = { type: "integer" };
const bool = { type: "boolean" };
const obj = { type: "object" };
const nullable = (type: string) => ({ type: [type, "null"] });

/** A refusal of the public endpoints: `ok:false` (verify: `authorized:false`, bot-check: `allow:false`), a reason, a message. */
export const publicRefusal = loose(
  { ok: { const: false }, authorized: { const: false }, reason: { $ref: "#/components/schemas/Reason" }, message: str, request_id: str },
  ["reason"],
);

/** A refusal of the admin API. */
export const adminRefusal = loose(
  { ok: { const: false }, reason: { $ref: "#/components/schemas/AdminReason" }, detail: str, message: str, request_id: str },
  ["ok", "reason"],
);

const keyDetails = loose({ id: int, name: str, prefix: str, environment: str, scopes: {}, domain: nullable("string"), is_trial: bool }, []);

const paging = { total: int, page: int, limit: int, has_more: bool };
const list = (field: string, item: Schema = obj): Schema =>
  loose({ ok: { const: true }, [field]: { type: "array", items: item }, ...paging }, ["ok", field]);
const one = (field: string, item: Schema = obj): Schema => loose({ ok: { const: true }, [field]: item }, ["ok", field]);

/** Success answers of the public endpoints, by endpoint name. */
export const PUBLIC_ANSWERS: Record<string, Schema> = {
  verify: strict(
    {
      authorized: { const: true }, reason: { const: "ok" }, source: str, key: keyDetails, domain: str, ts: int, expires_in: int, signature: str,
      nonce: str, latency_ms: { type: "number" }, entitlement: str, entitlement_expires: int, lifeline: str, browser_guard: str,
      firewall: obj, notice: str,
    },
    ["authorized", "reason", "ts", "signature"],
  ),
  "keys.json": strict(
    {
      keys: { type: "array", items: loose({ kty: { const: "OKP" }, crv: { const: "Ed25519" }, x: str, kid: str }, ["kty", "crv", "x"]) },
      tokens: strict({ format: str, alg: str, types: { type: "array", items: str } }, ["format", "alg", "types"]),
    },
    ["keys", "tokens"],
  ),
  content: loose({ ok: { const: true }, content: { type: "object", additionalProperties: loose({ type: str, value: {}, updated_at: str }, ["type"]) } }, ["ok"]),
  secret: loose({ ok: { const: true }, name: str, value: str, ts: int, signature: str, nonce: str }, ["ok", "name", "value", "ts", "signature"]),
  botcheck: loose({ enforced: bool, allow: bool, challenge: bool, nonce: str, config: obj, reason: str, token: str, verified: bool, blocked_url: str }, ["enforced", "allow"]),
  scan: loose({ ok: { const: true } }, ["ok"]),
  assignments: loose({ ok: { const: true }, count: int, assignments: { type: "array", items: obj }, ts: int }, ["ok"]),
  activity: loose({ ok: { const: true }, activity: { type: "array", items: obj }, total: int, page: int, has_more: bool, ts: int }, ["ok", "activity"]),
  status: loose({ status: obj }, []),
};

/** Success answers of the admin API, by `METHOD path`; other routes answer `ok:true` and are described loosely. */
export const ADMIN_ANSWERS: Record<string, Schema> = {
  "GET /me": one("principal", loose({ kind: { enum: ["operator", "token", "member"] } }, ["kind"])),
  "POST /orgs": one("org"),
  "GET /orgs": list("orgs"),
  "GET /orgs/:org": one("org"),
  "PATCH /orgs/:org": one("org"),
  "GET /orgs/:org/members": list("members"),
  "GET /orgs/:org/tokens": list("tokens"),
  "GET /orgs/:org/domains": list("domains"),
  "POST /orgs/:org/keys": loose({ ok: { const: true }, key: str, details: obj }, ["ok"]),
  "GET /orgs/:org/keys": list("keys"),
  "GET /keys/:id": one("details"),
  "PATCH /keys/:id": one("details"),
  "GET /orgs/:org/content": list("content"),
  "GET /orgs/:org/secrets": list("secrets"),
  "GET /orgs/:org/risks": list("risks"),
  "GET /orgs/:org/webhooks": list("webhooks"),
  "GET /orgs/:org/siem": list("destinations"),
  "GET /keys/:id/installations": list("installations"),
};

export const looseOk: Schema = loose({ ok: { const: true } }, ["ok"]);
