import { CEREMONY_REASONS, SESSION_CHANGE_REASONS, SESSION_REASONS } from "../admin/auth/common.js";
import { cookieName } from "../admin/auth/cookie.js";
import { AUTH_ROUTES, type AuthRoute } from "../admin/auth/routes.js";
import { ADMIN_BASE } from "../admin/common.js";
import { REASONS } from "../../shared/platform/reasons.js";
import { ADMIN_ROUTES } from "../admin/routes.js";
import { ADMIN_BODIES, ADMIN_QUERIES, PUBLIC_ENDPOINTS, type PublicEndpoint } from "./sources.js";
import {
  ADMIN_ANSWERS,
  adminReasonSchema,
  adminRefusal,
  looseOk,
  PUBLIC_ANSWERS,
  publicRefusal,
  reasonSchema,
  type Schema,
} from "./shapes.js";

/**
 * The OpenAPI 3.1 documents of the public API (`{base_url}/openapi.json`) and of the admin
 * API (`SITE_URL/admin/v1/openapi.json`), built from the route tables and the schemas the
 * routes validate with (sources.ts), so a description cannot drift from the check.
 */

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const VERSION = "1";

const json = (schema: Schema) => ({ "application/json": { schema } });

const refusals = (ref: string, statuses: Iterable<number>): Record<string, unknown> =>
  Object.fromEntries(
    [...new Set(statuses)]
      .sort()
      .map((status) => [String(status), { description: `Refused (see the reason).`, content: json({ $ref: ref }) }]),
  );

/** `/orgs/:org/keys` → `/orgs/{org}/keys`, and the names of its captures. */
export function templateOf(path: string): { template: string; names: string[] } {
  const names: string[] = [];
  const template = path.replace(/:([a-z_]+)/g, (_m, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { template, names };
}

function publicOperation(endpoint: PublicEndpoint, method: string): Record<string, unknown> {
  const properties = (endpoint.params as { properties?: Record<string, Schema> } | undefined)?.properties ?? {};
  const operation: Record<string, unknown> = {
    operationId: `${endpoint.name.replace(/\W/g, "_")}_${method}`,
    summary: endpoint.summary,
    tags: [endpoint.tag],
    // The key travels as a parameter (query, form or JSON body), not a header; endpoints without one are open.
    security: "key" in properties ? [{ key: [] }] : [],
    responses: {
      "200":
        endpoint.answer.kind === "json"
          ? { description: "Success.", content: json(endpoint.answer.schema) }
          : { description: "Success.", content: { [endpoint.answer.type]: { schema: { type: "string" } } } },
      ...(endpoint.notModified ? { "304": { description: "Not modified: the If-None-Match matched." } } : {}),
      ...refusals("#/components/schemas/Refusal", [400, 401, 403, 404, 405, 413, 429, 503, ...(endpoint.extraStatuses ?? [])]),
    },
  };
  if (method === "get" || method === "head") {
    operation.parameters = Object.entries(properties).map(([name, schema]) => ({ name, in: "query", required: false, schema }));
  } else if (endpoint.params) {
    operation.requestBody = {
      required: false,
      content: { "application/json": { schema: endpoint.params }, "application/x-www-form-urlencoded": { schema: endpoint.params } },
    };
  }
  return operation;
}

export function publicDocument(siteUrl: string): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const endpoint of PUBLIC_ENDPOINTS) {
    const item: Record<string, unknown> = {};
    for (const method of endpoint.methods) item[method.toLowerCase()] = publicOperation(endpoint, method.toLowerCase());
    paths[endpoint.path] = item;
    // `verify` answers as `verify.php`: the alias refers to the same path item.
    if (endpoint.path.endsWith(".php") && endpoint.path.startsWith("/api/v1/")) {
      paths[endpoint.path.replace(/\.php$/, "")] = { $ref: `#/paths/${endpoint.path.replaceAll("~", "~0").replaceAll("/", "~1")}` };
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Access gateway: public API",
      version: VERSION,
      description: "interface.md: parameters as query string, JSON or form body; answers are JSON unless stated.",
    },
    servers: [{ url: siteUrl }],
    paths,
    components: {
      schemas: { Reason: reasonSchema, Refusal: publicRefusal },
      securitySchemes: {
        key: {
          type: "apiKey",
          in: "query",
          name: "key",
          description: "The API key (client or server), as the `key` parameter: query string, form or JSON body.",
        },
      },
    },
  };
}

/** Who may call an admin route, as the route table declares it (docs/accounts.md). */
function summaryOf(route: (typeof ADMIN_ROUTES)[number]): string {
  const reach = route.reach;
  const who =
    reach.who === "operator"
      ? "the operator only"
      : reach.who === "anyone"
        ? "any principal"
        : `the organization's principals, role ${reach.role} or above`;
  return `${route.method} ${route.path}: ${who}.`;
}

const operationIdOf = (method: string, path: string) =>
  `${method.toLowerCase()}${path.replace(/[/:]+(\w)/g, (_m, c: string) => c.toUpperCase()).replace(/\W/g, "")}`;

/** What each credential of a sign-in route is, as the operation's `x-credential` and description say. */
const CREDENTIALS: Record<AuthRoute["credential"], string> = {
  none: "No credential.",
  invitation_link: "The invitation link's token, in the body (`token`).",
  signin_link: "A sign-in link's token, in the body (`token`).",
  passkey_assertion: "A registered passkey's WebAuthn assertion, in the body (`response`).",
  session: "The session cookie.",
};

/** Every reason a sign-in route may refuse with: its wrapper's, its own, and those of the HTTP layer and the route wrapper. */
function authReasons(route: AuthRoute): string[] {
  const wrapper =
    route.credential === "session"
      ? [...SESSION_REASONS, ...(route.method === "GET" ? [] : SESSION_CHANGE_REASONS)]
      : [...CEREMONY_REASONS];
  return [...new Set([...wrapper, ...route.refusals, "payload_too_large", "internal_error", "unavailable"])];
}

/** A sign-in route (admin/auth/routes.ts AUTH_ROUTES): its own credential, not the admin API's bearer. */
function authOperation(route: AuthRoute): Record<string, unknown> {
  const { names } = templateOf(route.path);
  const byStatus = new Map<number, string[]>();
  for (const reason of authReasons(route)) {
    const status = reason in REASONS ? REASONS[reason as keyof typeof REASONS].status : 400;
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  // A body checked by a validator is also refused naming its field (`bad_<field>`, `missing_<field>`).
  if (route.body !== undefined && !byStatus.has(400)) byStatus.set(400, []);
  const refusalsOf: Record<string, unknown> = {};
  for (const [status, reasons] of [...byStatus].sort(([a], [b]) => a - b)) {
    const named = reasons.length > 0 ? [{ enum: reasons }] : [];
    const field = status === 400 && route.body !== undefined ? [{ type: "string", pattern: "^(bad|missing)_[A-Za-z0-9_$]+$" }] : [];
    const reason = named.length + field.length === 1 ? [...named, ...field][0] : { anyOf: [...named, ...field] };
    refusalsOf[String(status)] = {
      description: `Refused: ${[...reasons.map((r) => `\`${r}\``), ...(field.length ? ["`bad_<field>`, `missing_<field>`"] : [])].join(", ")}.`,
      ...(status === 429
        ? { headers: { "Retry-After": { description: "Seconds until the budget's window ends.", schema: { type: "integer" } } } }
        : {}),
      content: json({ allOf: [{ $ref: "#/components/schemas/AdminRefusal" }], properties: { reason } }),
    };
  }
  const cookie = route.answer.cookie;
  const change = route.method !== "GET";
  const operation: Record<string, unknown> = {
    operationId: operationIdOf(route.method, route.path.slice(ADMIN_BASE.length)),
    tags: ["auth"],
    summary: route.summary,
    description:
      route.credential === "session"
        ? `${CREDENTIALS.session}${change ? " A change: also `X-CSRF-Token` (the session's `csrf_token`) and `Origin` equal to the site's origin, else `csrf_rejected`." : ""} No bearer token is accepted.`
        : `${CREDENTIALS[route.credential]} No session or bearer token. \`Origin\`, when sent, must be the site's origin (else \`csrf_rejected\`); each call spends the per-source sign-in budget (\`signin_rate_limited\`).`,
    "x-credential": route.credential,
    security: route.credential === "session" ? [change ? { session: [], csrf: [] } : { session: [] }] : [],
    responses: {
      [String(route.answer.status)]: {
        description:
          cookie === "set"
            ? "Signed in: the session cookie is set."
            : cookie === "cleared"
              ? "Done; a revoked own session's cookie is cleared."
              : "Success.",
        ...(cookie
          ? {
              headers: {
                "Set-Cookie": {
                  description: cookie === "set" ? "The session cookie." : "The session cookie, expired (when it was this session).",
                  schema: { type: "string" },
                },
              },
            }
          : {}),
        content: json(route.answer.schema),
      },
      ...refusalsOf,
    },
  };
  if (names.length > 0) operation.parameters = names.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  if (route.body !== undefined) operation.requestBody = { required: true, content: json(route.body) };
  return operation;
}

export function adminDocument(siteUrl: string): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const route of ADMIN_ROUTES) {
    const id = `${route.method} ${route.path}`;
    const { template, names } = templateOf(`${ADMIN_BASE}${route.path}`);
    const answer = ADMIN_ANSWERS[id];
    const body = ADMIN_BODIES[id];
    const success = route.method === "POST" && answer === undefined ? ["200", "201"] : ["200"];
    const operation: Record<string, unknown> = {
      operationId: operationIdOf(route.method, route.path),
      tags: [route.path.split("/")[1]],
      summary: summaryOf(route),
      responses: {
        ...Object.fromEntries(success.map((status) => [status, { description: "Success.", content: json(answer ?? looseOk) }])),
        ...(route.method === "POST" && answer !== undefined ? { "201": { description: "Created.", content: json(answer) } } : {}),
        ...refusals("#/components/schemas/AdminRefusal", [400, 401, 403, 404, 405, 409, 413, 429, 500, 502, 503, 504]),
      },
    };
    const parameters = [
      ...names.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
      ...Object.entries(ADMIN_QUERIES[id] ?? {}).map(([name, schema]) => ({ name, in: "query", required: false, schema })),
    ];
    if (parameters.length > 0) operation.parameters = parameters;
    if (body !== undefined) operation.requestBody = { required: true, content: json(body) };
    // The operator's token only, or also a member's session (a change with its CSRF proof: session-principal.ts).
    if (route.reach.who !== "operator")
      operation.security = [{ bearer: [] }, route.method === "GET" ? { session: [] } : { session: [], csrf: [] }];
    paths[template] = { ...(paths[template] ?? {}), [route.method.toLowerCase()]: operation };
  }
  for (const route of AUTH_ROUTES) {
    const { template } = templateOf(route.path);
    paths[template] = { ...(paths[template] ?? {}), [route.method.toLowerCase()]: authOperation(route) };
  }
  // The description itself: no data, readable without credentials (docs/api.md).
  paths[`${ADMIN_BASE}/openapi.json`] = {
    get: {
      operationId: "getOpenapi",
      tags: ["description"],
      summary: "This document.",
      security: [],
      responses: {
        "200": { description: "This document.", content: json(PUBLIC_ANSWERS.openapi) },
        "304": { description: "Not modified: the If-None-Match matched." },
        ...refusals("#/components/schemas/AdminRefusal", [405, 503]),
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Access gateway: admin API",
      version: VERSION,
      description:
        "operator-api.md sections 2, 4 and 5. Bearer ADMIN_TOKEN, an organization token (gwt_) or a member's session; the member sign-in routes under /admin/v1/auth/ (docs/accounts-members.md) take their own credentials.",
    },
    servers: [{ url: siteUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: { Reason: reasonSchema, AdminReason: adminReasonSchema, AdminRefusal: adminRefusal },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN (the operator) or an organization token (`gwt_`)." },
        session: {
          type: "apiKey",
          in: "cookie",
          name: cookieName(siteUrl),
          description:
            "A member's session (docs/accounts-members.md), set by a sign-in under /admin/v1/auth/: HttpOnly, SameSite=Lax, Path=/; on an https site `__Host-gw_session` with Secure. Refused `session_expired` once revoked, idle past its idle lifetime or past its absolute end.",
        },
        csrf: {
          type: "apiKey",
          in: "header",
          name: "X-CSRF-Token",
          description:
            "With a session, every method but GET and HEAD: the session's `csrf_token` (the sign-in answer, GET /admin/v1/auth/session), and `Origin` equal to the site's origin; otherwise `csrf_rejected`.",
        },
      },
    },
  };
}
