import {
  recordActivity,
  BUDGETS,
  LIFETIMES,
  type Budget,
  csrfTokenOf,
  newToken,
  tokenHash,
  TOKEN_PATTERN,
  insertSession,
  type SessionRow,
  type SigninMethod,
  type MemberRow,
  type PasskeyRow,
} from "../../../shared/accounts/index.js";
import type { PoolClient } from "../../../shared/platform/db/pool.js";
import { isStorableText, unstorableField } from "../../../shared/platform/validation.js";
import type { IngressDeps } from "../../deps.js";
import { readJson, type Params } from "../../params.js";
import { ok, refuse, refuseField } from "../../reply.js";
import type { HttpReply, HttpRequest, RouteParams } from "../../types.js";
import { iso } from "../common.js";
import { idleEndOf, resolveSession, type LiveSession } from "../session-principal.js";
import { sessionCookie, siteOf, siteOrigin } from "./cookie.js";
import { sourceSubject, spend } from "./limits.js";

/**
 * What the sign-in routes share: the two wrappers (a ceremony without a session, a call
 * with one), opening a session, and the views. Every answer is `Cache-Control: no-store`
 * (it may carry a CSRF token) and `nosniff` (never read as anything but JSON).
 */

const NO_STORE = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

function withNoStore(reply: HttpReply): HttpReply {
  return { ...reply, headers: { ...NO_STORE, ...reply.headers } };
}

function parseBody(request: HttpRequest): { body: Params } | { reply: HttpReply } {
  const body = readJson(request);
  if (body === null) return { reply: refuseField("bad_json", "the body is not a JSON object") };
  const unstorable = unstorableField(body);
  if (unstorable !== null)
    return { reply: refuseField(`bad_${isStorableText(unstorable) ? unstorable : "json"}`, "NUL, a lone surrogate or too deep nesting") };
  return { body };
}

/** The refusals of `ceremony` itself, before its handler runs (OpenAPI: ingress/openapi/document.ts). */
export const CEREMONY_REASONS = ["csrf_rejected", "signin_rate_limited", "bad_json"] as const;

export type CeremonyHandler = (request: HttpRequest, deps: IngressDeps, params: RouteParams, body: Params) => Promise<HttpReply>;

/**
 * A sign-in step taken without a session. A browser sends `Origin` with every POST: when
 * present it must be the site's (a page of another origin cannot sign its visitor in to an
 * account of the attacker's choosing). A client outside a browser sends none and is not a
 * cross-site request. Each call spends the per-source budget given (by default the
 * ceremony budget) before anything else.
 */
export function ceremony(handler: CeremonyHandler, budget: Budget = BUDGETS.ceremonyPerSource) {
  return Object.assign(
    async (request: HttpRequest, deps: IngressDeps, params: RouteParams): Promise<HttpReply> => {
      const origin = request.headers.origin;
      if (origin !== undefined && origin !== siteOrigin(deps)) return refuse("csrf_rejected", {}, NO_STORE);
      const over = await spend(deps, budget, sourceSubject(request));
      if (over) return over;
      const parsed = parseBody(request);
      if ("reply" in parsed) return withNoStore(parsed.reply);
      return withNoStore(await handler(request, deps, params, parsed.body));
    },
    { credential: "ceremony" as const },
  );
}

export type SessionHandler = (
  request: HttpRequest,
  deps: IngressDeps,
  params: RouteParams,
  body: Params,
  live: LiveSession,
) => Promise<HttpReply>;

/** The refusals of `withSession` itself: every method, and the ones a change (not GET) adds. */
export const SESSION_REASONS = ["unauthorized", "session_expired", "bad_json"] as const;
export const SESSION_CHANGE_REASONS = ["csrf_rejected"] as const;

/** A call made with the member's session (and, for a change, its CSRF proof: session-principal.ts). */
export function withSession(handler: SessionHandler) {
  return Object.assign(
    async (request: HttpRequest, deps: IngressDeps, params: RouteParams): Promise<HttpReply> => {
      const resolved = await resolveSession(request, deps);
      if (resolved.kind === "none") return refuse("unauthorized", {}, NO_STORE);
      if (resolved.kind === "refused") return resolved.reply;
      const parsed = parseBody(request);
      if ("reply" in parsed) return withNoStore(parsed.reply);
      return withNoStore(await handler(request, deps, params, parsed.body, resolved.live));
    },
    { credential: "session" as const },
  );
}

/** How the activity record names a member: name and e-mail, never an address. */
export function memberWho(member: Pick<MemberRow, "name" | "email">): string {
  return `${member.name} <${member.email}>`;
}

export const tokenSchema = { type: "string", pattern: TOKEN_PATTERN };
export const passkeyNameSchema = { type: "string", minLength: 1, maxLength: 100 };

/** A WebAuthn answer as @simplewebauthn/browser sends it; the library checks the rest. */
const credentialBase = {
  id: { type: "string", minLength: 1, maxLength: 1400 },
  rawId: { type: "string", minLength: 1, maxLength: 1400 },
  type: { const: "public-key" },
  clientExtensionResults: { type: "object", default: {} },
  authenticatorAttachment: { type: "string", maxLength: 32 },
};

export const registrationResponseSchema = {
  type: "object",
  required: ["id", "rawId", "response", "type"],
  properties: {
    ...credentialBase,
    response: {
      type: "object",
      required: ["clientDataJSON", "attestationObject"],
      properties: {
        clientDataJSON: { type: "string", maxLength: 8192 },
        attestationObject: { type: "string", maxLength: 65536 },
        transports: { type: "array", maxItems: 10, items: { type: "string", maxLength: 32 } },
      },
    },
  },
};

export const authenticationResponseSchema = {
  type: "object",
  required: ["id", "rawId", "response", "type"],
  properties: {
    ...credentialBase,
    response: {
      type: "object",
      required: ["clientDataJSON", "authenticatorData", "signature"],
      properties: {
        clientDataJSON: { type: "string", maxLength: 8192 },
        authenticatorData: { type: "string", maxLength: 65536 },
        signature: { type: "string", maxLength: 8192 },
        userHandle: { type: "string", maxLength: 256 },
      },
    },
  },
};

export interface OpenedSession {
  session: SessionRow;
  token: string;
  csrfToken: string;
}

/**
 * Makes a session for a member who just proved who they are, and records the sign-in
 * (team_security) in the same transaction.
 */
export async function openSession(
  tx: PoolClient,
  deps: IngressDeps,
  request: HttpRequest,
  input: { member: MemberRow; method: SigninMethod; passkeyId: number | null; nowMs: number },
): Promise<OpenedSession> {
  const token = newToken();
  const hash = tokenHash(token);
  const session = await insertSession(tx, {
    memberId: input.member.id,
    tokenHash: hash,
    method: input.method,
    passkeyId: input.passkeyId,
    userAgent: (request.headers["user-agent"] ?? "").slice(0, 200),
    nowMs: input.nowMs,
    absoluteMs: LIFETIMES.sessionAbsoluteMs,
    idleMs: LIFETIMES.sessionIdleMs,
  });
  const how = { passkey: "with a passkey", link: "with an e-mailed link", invitation: "by accepting the invitation" }[input.method];
  await recordActivity(tx, {
    orgId: input.member.org_id,
    atMs: input.nowMs,
    who: memberWho(input.member),
    via: "admin",
    group: "team_security",
    action: `Signed in ${how}`,
    actionCode: "member.signed_in",
    detail: { method: input.method, session_id: session.id },
  });
  return { session, token, csrfToken: csrfTokenOf(deps.masterSecret, hash) };
}

const str = { type: "string" };
const int = { type: "integer" };
const time = { type: "string", format: "date-time" };
const object = (properties: Record<string, object>, required = Object.keys(properties)) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

/** The answers' shapes, next to the views that make them (the admin OpenAPI document: ingress/openapi/document.ts). */
export const sessionViewSchema = object({
  id: int,
  method: { enum: ["passkey", "link", "invitation"] },
  user_agent: str,
  created_at: time,
  last_seen_at: time,
  idle_expires_at: time,
  expires_at: time,
  current: { type: "boolean" },
});

export const passkeyViewSchema = object({
  id: int,
  name: str,
  created_at: time,
  last_used_at: { type: ["string", "null"], format: "date-time" },
  device_type: str,
  backed_up: { type: "boolean" },
});

const whoProperties = {
  member: object({ id: int, name: str, email: str, role: { enum: ["owner", "admin", "member"] } }),
  org: object({ id: int, name: str }),
};

/** `ok(...)`'s answer: `ok: true` and the fields given. */
export const answerSchema = (properties: Record<string, object>) => object({ ok: { const: true }, ...properties });

/** The answer of every sign-in and of GET /session (`signedIn`, sessions.ts currentSession). */
export const signedInSchema = answerSchema({ ...whoProperties, session: sessionViewSchema, csrf_token: str, passkeys: int });

/** WebAuthn options as @simplewebauthn/server makes them (the browser library reads them). */
export const webauthnOptionsSchema = {
  type: "object",
  description: "PublicKeyCredential options (JSON), as @simplewebauthn/server makes them.",
};

/** Whose a sign-in link is (link.ts peekSigninLink). */
export const linkAccountSchema = answerSchema({
  member: object({ name: str, email: str, role: { enum: ["owner", "admin", "member"] } }),
  org: object({ id: int, name: str }),
  expires_at: time,
});

export const invitationOptionsSchema = answerSchema({
  options: webauthnOptionsSchema,
  member: object({ name: str, email: str, role: { enum: ["owner", "admin", "member"] } }),
  org: object({ id: int, name: str }),
  expires_at: time,
});

export function sessionView(session: SessionRow, currentId: number | null) {
  return {
    id: session.id,
    method: session.method,
    user_agent: session.user_agent,
    created_at: iso(session.created_at),
    last_seen_at: iso(session.last_seen_at),
    idle_expires_at: iso(new Date(idleEndOf(session))),
    expires_at: iso(session.expires_at),
    current: session.id === currentId,
  };
}

export function passkeyView(passkey: PasskeyRow) {
  return {
    id: passkey.id,
    name: passkey.name,
    created_at: iso(passkey.created_at),
    last_used_at: iso(passkey.last_used_at),
    device_type: passkey.device_type,
    backed_up: passkey.backed_up,
  };
}

export function whoView(member: MemberRow, orgName: string) {
  return {
    member: { id: member.id, name: member.name, email: member.email, role: member.role },
    org: { id: member.org_id, name: orgName },
  };
}

/** The answer of every sign-in: who, the session, its CSRF token, and the cookie. */
export function signedIn(
  deps: IngressDeps,
  opened: OpenedSession,
  member: MemberRow,
  orgName: string,
  passkeys: number,
  status = 200,
): HttpReply {
  // A session just made: the cookie lives exactly as long as its absolute lifetime.
  const maxAgeS = (opened.session.expires_at.getTime() - opened.session.created_at.getTime()) / 1000;
  return ok(
    { ...whoView(member, orgName), session: sessionView(opened.session, opened.session.id), csrf_token: opened.csrfToken, passkeys },
    status,
    { "set-cookie": sessionCookie(siteOf(deps), opened.token, maxAgeS), ...NO_STORE },
  );
}
