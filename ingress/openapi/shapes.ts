import { PLAN_NAMES } from "../../shared/accounts/index.js";
import { SIEM_KINDS } from "../../shared/events/index.js";
import { REASONS } from "../../shared/platform/reasons.js";

/**
 * Answer shapes of the OpenAPI documents. Request shapes are never written here: they are
 * the schemas the routes validate with (routes/schemas.ts, the admin validators). A shape
 * with `additionalProperties: false` is fully described (the test helper fails on a field
 * it lacks); a loose one (`x-loose: true`) names its required fields only.
 */

export type Schema = object;

export const REASON_NAMES = Object.keys(REASONS);

/** Every reason of shared/platform/reasons.ts, with its status, as the enum of `reason`. */
export const reasonSchema: Schema = {
  type: "string",
  enum: REASON_NAMES,
  "x-reasons": Object.fromEntries(
    Object.entries(REASONS).map(([name, r]) => [name, { status: r.status, counts: r.counts, message: r.message }]),
  ),
};

/** Admin refusals also name a field (`bad_<field>`, `missing_<field>`; shared/platform/validation.ts reasonOf). */
export const adminReasonSchema: Schema = {
  anyOf: [{ $ref: "#/components/schemas/Reason" }, { type: "string", pattern: "^(bad|missing)_[A-Za-z0-9_$]+$" }],
};

const loose = (properties: Record<string, Schema>, required: string[]): Schema => ({
  type: "object",
  properties,
  required,
  additionalProperties: true,
  "x-loose": true,
});
const strict = (properties: Record<string, Schema>, required: string[]): Schema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

const str = { type: "string" };
const int = { type: "integer" };
const bool = { type: "boolean" };
const obj = { type: "object" };
const nullable = (type: string) => ({ type: [type, "null"] });
/** A compact JWS signed with the keys.json key (shared/platform/crypto/attestation.ts). */
const attestation = (description: string) => ({
  type: "string",
  pattern: "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$",
  description,
});

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

/** interface.md 2.7 (routes/assignment-view.ts), plus found_at and target_date. */
const assignmentSchema = strict(
  {
    domain: str,
    finding_key: str,
    finding: {},
    status: { enum: ["open", "in_progress", "done"] },
    owner: {},
    due_at: nullable("string"),
    overdue: bool,
    past_target: bool,
    updated_at: str,
    found_at: str,
    target_date: nullable("string"),
  },
  ["domain", "finding_key", "status"],
);

/** Success answers of the public endpoints, by endpoint name. */
export const PUBLIC_ANSWERS: Record<string, Schema> = {
  verify: strict(
    {
      authorized: { const: true },
      reason: { const: "ok" },
      source: str,
      key: keyDetails,
      domain: str,
      ts: int,
      expires_in: int,
      signature: str,
      nonce: str,
      latency_ms: { type: "number" },
      entitlement: str,
      entitlement_expires: int,
      lifeline: str,
      browser_guard: str,
      firewall: obj,
      notice: str,
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
  content: strict(
    {
      ok: { const: true },
      domain: str,
      ts: int,
      signature: str,
      latency_ms: { type: "number" },
      content: {
        type: "object",
        additionalProperties: strict({ type: str, value: {}, updated_at: nullable("string") }, ["type", "value"]),
      },
      attestation: attestation(
        "JWS (EdDSA, keys.json) with claims typ=content, iss, key, org, dom (the host the domain field names, WHATWG URL, lower case), ck (the content_key sent, null for every value), sha (SHA-256 hex of the content JSON text as in the body), iat, exp = iat + 120. docs/content.md.",
      ),
    },
    ["ok", "content", "ts", "signature", "attestation"],
  ),
  secret: strict(
    {
      ok: { const: true },
      name: str,
      value: str,
      ts: int,
      signature: str,
      nonce: str,
      attestation: attestation(
        "JWS (EdDSA, keys.json) with claims typ=secret, iss, key, org, dom (the host the domain names), name, sha (SHA-256 hex of the value JSON text as in the body), nonce (when sent), iat, exp = iat + 120. docs/secret.md.",
      ),
    },
    ["ok", "name", "value", "ts", "signature", "attestation"],
  ),
  // A refused visitor is an answer of the check (200, allow:false), not a refusal of the call.
  botcheck: strict(
    {
      enforced: bool,
      allow: bool,
      ts: int,
      challenge: { const: true },
      nonce: str,
      token: str,
      verified: { const: true },
      blocked_url: str,
      reason: { $ref: "#/components/schemas/Reason" },
      config: strict(
        { hold_ms: int, allow_desktop: bool, allow_tablet: bool, allow_mobile: bool, difficulty: int, difficulty_without_evidence: int },
        ["hold_ms", "allow_desktop", "allow_tablet", "allow_mobile"],
      ),
    },
    ["enforced", "allow"],
  ),
  scan: loose({ ok: { const: true } }, ["ok"]),
  // One shape for the list (GET), one assignment with its history (history=1) and a change (POST).
  assignments: strict(
    {
      ok: { const: true },
      ts: int,
      count: int,
      assignments: { type: "array", items: assignmentSchema },
      assignment: assignmentSchema,
      history: {
        type: "array",
        items: strict({ time: str, who: str, what: str, code: nullable("string"), automatic: bool }, ["time", "who", "what"]),
      },
      notes: { type: "array", items: strict({ id: int, time: str, who: str, body: str }, ["id", "time", "who", "body"]) },
      passed: bool,
      check_status: {},
      summary: {},
    },
    ["ok", "ts"],
  ),
  activity: strict(
    {
      ok: { const: true },
      total: int,
      page: int,
      has_more: bool,
      ts: int,
      activity: {
        type: "array",
        items: strict(
          { time: str, who: str, action: str, action_code: str, group: str, via: str, domain: nullable("string"), detail: {} },
          ["time", "who", "action", "action_code", "group"],
        ),
      },
    },
    ["ok", "activity", "total", "page", "has_more", "ts"],
  ),
  status: loose({ status: obj }, []),
  openapi: loose({ openapi: { const: "3.1.0" }, info: obj, paths: obj }, ["openapi", "info", "paths"]),
};

const time = { type: "string", format: "date-time" };
const nullableTime = { type: ["string", "null"], format: "date-time" };

/** operator-api.md section 2: an organization (admin/orgs.ts orgView). */
const orgSchema = strict(
  {
    id: int,
    name: str,
    plan: { enum: PLAN_NAMES },
    fix_target_days: int,
    default_owner: { anyOf: [{ type: "null" }, strict({ name: str, email: str }, ["name", "email"])] },
    subscription: { enum: ["active", "lapsed"] },
    cycle_started_at: time,
    cycle_resets_at: time,
    allowance: nullable("integer"),
    used: int,
  },
  ["id", "name", "plan", "fix_target_days", "default_owner", "subscription", "cycle_started_at", "cycle_resets_at", "allowance", "used"],
);

const memberSchema = strict({ id: int, name: str, email: str, role: { enum: ["owner", "admin", "member"] }, created_at: nullableTime }, [
  "id",
  "name",
  "email",
  "role",
]);

/** GET /me (admin/me.ts): one of three principals. */
const principalSchema = {
  oneOf: [
    strict({ kind: { const: "operator" } }, ["kind"]),
    strict(
      {
        kind: { const: "token" },
        org: strict({ id: int, name: str }, ["id", "name"]),
        scopes: { type: "array", items: str },
        token: strict({ id: int, name: str }, ["id", "name"]),
      },
      ["kind", "org", "scopes", "token"],
    ),
    strict(
      {
        kind: { const: "member" },
        org: strict({ id: int, name: str }, ["id", "name"]),
        role: { enum: ["owner", "admin", "member"] },
        member: strict({ id: int, name: str, email: str }, ["id", "name", "email"]),
      },
      ["kind", "org", "role", "member"],
    ),
  ],
};

const strings = { type: "array", items: str };

/** A key's admin details (admin/key-view.ts keyDetails): the settings of operator-api.md section 2 and the key's state. */
const keySchema = strict(
  {
    id: int,
    org_id: int,
    name: str,
    prefix: str,
    environment: str,
    industry: str,
    scopes: strings,
    domain: str,
    is_trial: bool,
    expires_at: nullableTime,
    kind: { enum: ["client", "server"] },
    status: str,
    ip_allow: strings,
    ip_deny: strings,
    ip_binding: bool,
    countries_allow: strings,
    countries_block: strings,
    rate_per_minute: int,
    rate_per_source_per_minute: nullable("integer"),
    hard_expires_at: nullableTime,
    botcheck: obj,
    firewall: { type: ["object", "null"] },
    content_origin: nullable("string"),
    created_at: nullableTime,
    updated_at: nullableTime,
    last_used_at: nullableTime,
    rotated_from: nullable("integer"),
    retires_at: nullableTime,
  },
  ["id", "org_id", "name", "prefix", "kind", "status"],
);

/** An organization token (admin/tokens.ts tokenDetails); the token itself only in the create answer. */
const tokenSchema = strict(
  {
    id: int,
    name: str,
    scopes: strings,
    prefix: str,
    created_at: nullableTime,
    created_by: {},
    last_used_at: nullableTime,
    expires_at: nullableTime,
  },
  ["id", "name", "scopes", "prefix"],
);

/** A domain (admin/domains.ts domainView). */
const domainSchema = strict(
  {
    id: int,
    name: str,
    verified: bool,
    verified_at: nullableTime,
    verification_token: str,
    txt_record: strict({ name: str, value: str }, ["name", "value"]),
    created_at: nullableTime,
  },
  ["id", "name", "verified", "txt_record"],
);

const date = { type: "string", format: "date" };
const tallies = { type: "object", additionalProperties: int };

/** One day of usage (admin/usage.ts): the calls, counted and refused, by reason and by endpoint label (the callers' text). */
const usageDaySchema = strict({ day: date, calls: int, counted: int, refused: int, by_reason: tallies, by_endpoint: tallies }, [
  "day",
  "calls",
  "counted",
  "refused",
  "by_reason",
  "by_endpoint",
]);

/** An installation of one of the organization's keys (admin/org-installations.ts). */
const orgInstallationSchema = strict(
  {
    key_id: int,
    key_name: str,
    install: str,
    status: { enum: ["approved", "pending", "blocked"] },
    first_seen_at: time,
    last_seen_at: time,
  },
  ["key_id", "key_name", "install", "status", "first_seen_at", "last_seen_at"],
);

/** An installation of one key (admin/installations.ts view). */
const installationSchema = strict(
  { install: str, status: { enum: ["approved", "pending", "blocked"] }, first_seen_at: time, last_seen_at: time },
  ["install", "status", "first_seen_at", "last_seen_at"],
);

/** A SIEM destination with its delivery state (admin/siem.ts stateView). */
const destinationSchema = strict(
  {
    id: int,
    kind: { enum: SIEM_KINDS },
    url: str,
    index: nullable("string"),
    has_token: bool,
    created_at: time,
    delivered: int,
    pending: int,
    failed: int,
    dead_letters: int,
    last_error: nullable("string"),
    last_error_at: nullableTime,
    last_delivered_at: nullableTime,
    last_event_id: int,
  },
  [
    "id",
    "kind",
    "url",
    "index",
    "has_token",
    "created_at",
    "delivered",
    "pending",
    "failed",
    "dead_letters",
    "last_error",
    "last_error_at",
    "last_delivered_at",
    "last_event_id",
  ],
);

/** A webhook with its delivery counts (admin/webhooks.ts listOrgWebhooks); never its secret. */
const webhookSchema = strict(
  {
    id: int,
    url: str,
    created_at: time,
    delivered: int,
    pending: int,
    failed: int,
    last_error: nullable("string"),
    last_delivered_at: nullableTime,
  },
  ["id", "url", "created_at", "delivered", "pending", "failed", "last_error", "last_delivered_at"],
);

/** A note on an assigned finding (admin/notes.ts). */
const noteSchema = strict({ id: int, domain: str, finding_key: str, time, who: str, body: str }, [
  "id",
  "domain",
  "finding_key",
  "time",
  "who",
  "body",
]);

const listOf = (field: string, item: Schema): Schema =>
  strict({ ok: { const: true }, [field]: { type: "array", items: item }, ...paging }, ["ok", field, "total", "page", "limit", "has_more"]);

/** Success answers of the admin API, by `METHOD path`; other routes answer `ok:true` and are described loosely. */
export const ADMIN_ANSWERS: Record<string, Schema> = {
  "GET /me": strict({ ok: { const: true }, principal: principalSchema }, ["ok", "principal"]),
  "POST /orgs": strict({ ok: { const: true }, org: orgSchema }, ["ok", "org"]),
  "GET /orgs": strict({ ok: { const: true }, orgs: { type: "array", items: orgSchema }, ...paging }, [
    "ok",
    "orgs",
    "total",
    "page",
    "limit",
    "has_more",
  ]),
  "GET /orgs/:org": strict({ ok: { const: true }, org: orgSchema }, ["ok", "org"]),
  "PATCH /orgs/:org": strict({ ok: { const: true }, org: orgSchema }, ["ok", "org"]),
  "POST /orgs/:org/members": strict(
    { ok: { const: true }, member: memberSchema, invitation: strict({ expires_at: str, sent: bool }, ["expires_at", "sent"]) },
    ["ok", "member", "invitation"],
  ),
  "GET /orgs/:org/members": strict({ ok: { const: true }, members: { type: "array", items: memberSchema }, ...paging }, [
    "ok",
    "members",
    "total",
    "page",
    "limit",
    "has_more",
  ]),
  "PATCH /orgs/:org/members/:id": strict({ ok: { const: true }, member: memberSchema }, ["ok", "member"]),
  "DELETE /orgs/:org/members/:id": strict(
    { ok: { const: true }, removed: memberSchema, assignments_unassigned: int, default_owner_cleared: bool, tokens_revoked: int },
    ["ok", "removed", "assignments_unassigned", "default_owner_cleared", "tokens_revoked"],
  ),
  "POST /orgs/:org/tokens": strict({ ok: { const: true }, token: str, details: tokenSchema }, ["ok", "token", "details"]),
  "GET /orgs/:org/tokens": listOf("tokens", tokenSchema),
  "POST /orgs/:org/domains": strict({ ok: { const: true }, domain: domainSchema }, ["ok", "domain"]),
  "GET /orgs/:org/domains": listOf("domains", domainSchema),
  "POST /orgs/:org/keys": strict({ ok: { const: true }, key: str, details: keySchema }, ["ok", "key", "details"]),
  "GET /orgs/:org/keys": listOf("keys", keySchema),
  "GET /keys/:id": strict({ ok: { const: true }, details: keySchema }, ["ok", "details"]),
  "PATCH /keys/:id": strict({ ok: { const: true }, details: keySchema }, ["ok", "details"]),
  "POST /keys/:id/rotate": strict({ ok: { const: true }, key: str, details: keySchema }, ["ok", "key", "details"]),
  "GET /orgs/:org/content": list("content"),
  "GET /orgs/:org/secrets": list("secrets"),
  "GET /orgs/:org/risks": list("risks"),
  "GET /orgs/:org/webhooks": listOf("webhooks", webhookSchema),
  "GET /orgs/:org/siem": listOf("destinations", destinationSchema),
  "GET /keys/:id/installations": listOf("installations", installationSchema),
  "GET /orgs/:org/assignments/:domain/:finding_key/notes": listOf("notes", noteSchema),
  "GET /orgs/:org/usage": strict(
    { ok: { const: true }, org_id: int, from: date, to: date, usage: { type: "array", items: usageDaySchema } },
    ["ok", "org_id", "from", "to", "usage"],
  ),
  "GET /orgs/:org/installations": listOf("installations", orgInstallationSchema),
};

export const looseOk: Schema = loose({ ok: { const: true } }, ["ok"]);
