import { lockOrgCount, ORG_LIMITS, type LimitedResource, type Principal } from "../../shared/accounts/index.js";
import type { Queryable } from "../../shared/platform/db/pool.js";
import { isStorableText, unstorableField, validator, type Validated } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { readJson, type Params } from "../params.js";
import { refuse, refuseField } from "../reply.js";
import type { HttpReply, HttpRequest, RouteParams } from "../types.js";
import { resolvePrincipal, whoOf } from "./principal.js";
import { authorize, type Reach } from "./reach.js";

/** Who made the call: the principal, and how the activity record names it. */
export interface Caller {
  principal: Principal;
  /** `operator`, `token:<name>` or `Name <email>` (principal.ts whoOf): never an address. */
  who: string;
}

export type AdminHandler = (
  request: HttpRequest,
  deps: IngressDeps,
  params: RouteParams,
  body: Params,
  caller: Caller,
) => Promise<HttpReply> | HttpReply;

export type AdminMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * One admin route. `reach` is required: a route cannot be registered without saying who
 * may call it (reach.ts), and handlers are only ever reached through `guarded`.
 */
export interface AdminRoute {
  readonly method: AdminMethod;
  /** Under /admin/v1, with `:name` captures. */
  readonly path: string;
  readonly reach: Reach;
  readonly handler: AdminHandler;
  /** When present and false, the route answers 404 `unknown_endpoint` to everyone (the test clock without GATEWAY_TEST_CLOCK). */
  readonly available?: (deps: IngressDeps) => boolean;
}

export const ADMIN_BASE = "/admin/v1";

/**
 * What every admin answer carries, refusals and faults included: it is an organization's
 * data or a credential's verdict, so no cache keeps it, and no browser reads it as anything
 * but its declared type.
 */
const ADMIN_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});
/** A thrown fault is answered by app.ts (`internal_error` for every admin path), with these headers. */
const ADMIN_FAULT = Object.freeze({ headers: () => ADMIN_HEADERS });

/**
 * The one wrapper of every admin route: the principal is resolved once, the route's reach
 * checked, the JSON body parsed (and refused when it cannot be stored), then the handler
 * runs with the caller; its answer leaves with ADMIN_HEADERS.
 */
export function guarded(route: AdminRoute) {
  return async (request: HttpRequest, deps: IngressDeps, params: RouteParams): Promise<HttpReply> => {
    request.fault = ADMIN_FAULT;
    const reply = await answer(route, request, deps, params);
    return { ...reply, headers: { ...reply.headers, ...ADMIN_HEADERS } };
  };
}

async function answer(route: AdminRoute, request: HttpRequest, deps: IngressDeps, params: RouteParams): Promise<HttpReply> {
  if (route.available && !route.available(deps)) return refuse("unknown_endpoint");
  const resolved = await resolvePrincipal(request, deps);
  if ("refusal" in resolved) return resolved.refusal;
  const { principal } = resolved;
  const refused = await authorize(route.reach, principal, request.method, params, deps);
  if (refused !== null) return refuse(refused);
  const body = readJson(request);
  if (body === null) return refuseField("bad_json", "the body is not a JSON object");
  const unstorable = unstorableField(body);
  if (unstorable !== null) {
    return refuseField(`bad_${isStorableText(unstorable) ? unstorable : "json"}`, "NUL, a lone surrogate or too deep nesting");
  }
  return route.handler(request, deps, params, body, { principal, who: whoOf(principal) });
}

export { idParam } from "./reach.js";

/**
 * Whether the organization already holds its ORG_LIMITS of `resource`, counted under a lock
 * on (organization, resource) taken here and held to the transaction's end: two creates at
 * once queue, so they cannot both take the last place.
 */
export async function atOrgLimit(tx: Queryable, orgId: number, resource: LimitedResource, count: () => Promise<number>): Promise<boolean> {
  await lockOrgCount(tx, orgId, resource);
  return (await count()) >= ORG_LIMITS[resource];
}

const LIMIT_WORDS: Record<LimitedResource, string> = {
  siem_destinations: "SIEM destinations per organization",
  webhooks: "webhooks per organization",
  tokens: "live tokens per organization",
  members: "members per organization",
  domains: "domains per organization",
  content: "content items per organization",
  secrets: "secrets per organization",
  risks: "risk acceptances in force per organization",
  notes: "notes per finding",
  passkeys: "passkeys per member",
};

/** 409 `limit_reached`, naming what is full and its limit. */
export function limitReached(resource: LimitedResource): HttpReply {
  const limit = ORG_LIMITS[resource];
  return refuse("limit_reached", { resource, limit, detail: `at most ${limit} ${LIMIT_WORDS[resource]}` });
}

export function check<T>(validate: (data: unknown) => Validated<T>, body: Params): { value: T } | { reply: HttpReply } {
  const result = validate(body);
  return result.ok ? { value: result.value } : { reply: refuseField(result.reason, result.detail) };
}

export { validator };

/**
 * A member's e-mail address, in every body that takes one: the `email` format is the
 * mailer's plain-address check (shared/platform/mail.ts), so an address the API takes is one
 * an invitation or a sign-in link can be sent to; anything else is 400 `bad_email`.
 */
export const memberEmailSchema = {
  type: "string",
  format: "email",
  maxLength: 254,
  description: "A plain local@domain address: no display name, comment, group, second address, space or non-ASCII character.",
} as const;

export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

export function parseTime(value: string): number {
  return Date.parse(value.includes("T") || !value.includes(" ") ? value : value.replace(" ", "T"));
}
