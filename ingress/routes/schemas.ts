import { ajv } from "../../shared/platform/validation.js";
import type { Params } from "../params.js";

/**
 * The JSON schemas of the public endpoints' parameters, checked once a request's query
 * and body are merged (ingress/params.ts). A parameter is a scalar (forms and query
 * strings carry strings; JSON bodies may carry numbers and booleans) of bounded length;
 * unknown parameters are ignored (interface.md section 9: clients may send more).
 * A request that breaks its schema is refused 400 `bad_request`.
 */
const scalar = (maxLength: number) => ({ type: ["string", "number", "boolean"], maxLength });

const KEY = { key: scalar(256) };

/** A parameter check that keeps its JSON schema, so the OpenAPI document (ingress/openapi/) describes what is checked. */
export type ParamsCheck = ((params: Params) => boolean) & {
  readonly schema: { type: "object"; properties: Record<string, object>; additionalProperties: true };
};

/**
 * How the quick check reads one property: a scalar's length bound, "any" (`{}`: anything
 * passes), or "full" (another schema: only ajv judges it).
 */
type Quick = { name: string; check: number | "any" | "full" };

function quickOf(name: string, schema: object): Quick {
  if (Object.keys(schema).length === 0) return { name, check: "any" };
  const { type, maxLength } = schema as { type?: unknown; maxLength?: unknown };
  const scalarTypes = Array.isArray(type) && type.length === 3 && ["string", "number", "boolean"].every((t) => type.includes(t));
  return { name, check: scalarTypes && typeof maxLength === "number" && Object.keys(schema).length === 2 ? maxLength : "full" };
}

function compile(properties: Record<string, object>): ParamsCheck {
  const schema = { type: "object", properties, additionalProperties: true } as const;
  const validate = ajv.compile(schema);
  const quick = Object.entries(properties).map(([name, property]) => quickOf(name, property));
  // The common request passes without ajv: each property absent, a number or boolean, or a
  // string no longer in UTF-16 units than its bound (so no longer in code points, which
  // ajv's maxLength counts one by one). Anything else is judged by the schema itself.
  const passesQuickly = (params: Params): boolean => {
    for (const { name, check } of quick) {
      if (check === "any") continue;
      const value = params[name];
      if (value === undefined) continue;
      if (check === "full") return false;
      // A JSON number past the doubles (1e999) parses to Infinity, which ajv refuses.
      if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") continue;
      if (typeof value !== "string" || value.length > check) return false;
    }
    return true;
  };
  return Object.assign((params: Params) => passesQuickly(params) || validate(params) === true, { schema });
}

/**
 * The parameters each endpoint reads, by endpoint name (`verify` for verify.php): one table,
 * so tests can send every parameter of every endpoint (test/ingress/prototype-names.test.ts).
 */
export const PUBLIC_PARAMETERS = {
  verify: {
    ...KEY,
    domain: scalar(2048),
    nonce: scalar(256),
    scope: scalar(512),
    ip: scalar(64),
    install: scalar(128),
    endpoint: scalar(64),
    client: scalar(64),
    sdk_version: scalar(32),
  },
  // content_key, name and nonce are judged by their routes (not_found, missing_name, invalid_challenge).
  content: { ...KEY, domain: scalar(2048), content_key: {} },
  secret: { ...KEY, domain: scalar(2048), nonce: scalar(256), name: {} },
  botcheck: {
    ...KEY,
    action: scalar(16),
    nonce: {},
    held_ms: scalar(16),
    token: scalar(1024),
    signals: { anyOf: [{ type: "object" }, { type: "string", maxLength: 16_384 }] },
    // proof and interaction are judged by the grant (an unreadable one is no proof, no evidence).
    proof: {},
    interaction: {},
  },
  scan: { ...KEY, domain: scalar(2048), list: scalar(8), history: scalar(8) },
  // Values are judged by their routes (unknown_status, bad_due, bad_finding_key, ...); only lengths here.
  assignments: {
    ...KEY,
    domain: scalar(2048),
    for_domain: scalar(2048),
    finding_key: scalar(128),
    status: scalar(32),
    owner: scalar(320),
    due: scalar(32),
    overdue: scalar(8),
    history: scalar(8),
    recheck: scalar(8),
  },
  activity: {
    ...KEY,
    domain: scalar(2048),
    for_domain: scalar(2048),
    from: scalar(32),
    to: scalar(32),
    group: scalar(32),
    limit: scalar(16),
    page: scalar(16),
  },
  // since, limit, type and format are judged by the route (bad_since, bad_limit, unknown_type, bad_format).
  events: { ...KEY, domain: scalar(2048), since: scalar(32), limit: scalar(16), type: scalar(64), format: scalar(16) },
} as const satisfies Record<string, Record<string, object>>;

export const verifyParams = compile(PUBLIC_PARAMETERS.verify);
export const contentParams = compile(PUBLIC_PARAMETERS.content);
export const secretParams = compile(PUBLIC_PARAMETERS.secret);
export const botcheckParams = compile(PUBLIC_PARAMETERS.botcheck);
export const scanParams = compile(PUBLIC_PARAMETERS.scan);
export const assignmentsParams = compile(PUBLIC_PARAMETERS.assignments);
export const activityParams = compile(PUBLIC_PARAMETERS.activity);
export const eventsParams = compile(PUBLIC_PARAMETERS.events);
