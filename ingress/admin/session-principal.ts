import {
  type Principal,
  LIFETIMES,
  csrfTokenOf,
  isToken,
  tokenHash,
  findSessionByToken,
  touchSession,
  type SessionRow,
  type MemberRow,
} from "../../shared/accounts/index.js";
import { safeEqual } from "../../shared/platform/crypto/hash.js";
import type { IngressDeps } from "../deps.js";
import { refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { clearedCookie, readSessionCookie, siteOf } from "./auth/cookie.js";

/**
 * A member's session as an admin API principal (docs/accounts-members.md). The cookie's
 * token is looked up by its SHA-256 on the primary database on every request, so a session
 * revoked from another one, a member removed or a role changed counts from the next request.
 *
 * A session is live while it is not revoked, was used within the idle lifetime and is
 * before its absolute end (both on the shared clock). A state-changing method (anything but
 * GET and HEAD) must also carry `Origin` equal to SITE_URL's origin and `X-CSRF-Token` equal
 * to the session's CSRF token (shared/accounts/secrets.ts): a page of another origin can
 * make a browser send the cookie with a top-level form POST (SameSite=Lax allows top-level
 * navigations) but cannot set that header nor read the token.
 */

export interface LiveSession {
  principal: Extract<Principal, { kind: "member" }>;
  session: SessionRow;
  member: MemberRow;
  orgName: string;
  csrfToken: string;
}

export type SessionResolution = { kind: "none" } | { kind: "refused"; reply: HttpReply } | { kind: "live"; live: LiveSession };

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** When a session ends for being idle: its last request plus the idle lifetime, capped by its absolute end. */
export function idleEndOf(session: SessionRow): number {
  return Math.min(session.last_seen_at.getTime() + LIFETIMES.sessionIdleMs, session.expires_at.getTime());
}

export async function resolveSession(request: HttpRequest, deps: IngressDeps): Promise<SessionResolution> {
  const site = siteOf(deps);
  const token = readSessionCookie(request, site);
  if (token === null) return { kind: "none" };
  const expired = (): SessionResolution => ({
    kind: "refused",
    reply: refuse("session_expired", {}, { "set-cookie": clearedCookie(site), "cache-control": "no-store" }),
  });
  if (!isToken(token)) return expired();
  const hash = tokenHash(token);
  const found = await findSessionByToken(deps.db, hash);
  const now = deps.clock.now();
  if (!found || found.session.revoked_at !== null || idleEndOf(found.session) <= now) return expired();
  const csrfToken = csrfTokenOf(deps.masterSecret, hash);
  if (!SAFE_METHODS.has(request.method)) {
    const sameOrigin = request.headers.origin === new URL(site).origin;
    if (!sameOrigin || !safeEqual(request.headers["x-csrf-token"] ?? "", csrfToken)) {
      return { kind: "refused", reply: refuse("csrf_rejected", {}, { "cache-control": "no-store" }) };
    }
  }
  await touchSession(deps.db, found.session.id, now, LIFETIMES.sessionTouchMs);
  const { session, member, orgName } = found;
  return {
    kind: "live",
    live: {
      principal: {
        kind: "member",
        orgId: member.org_id,
        orgName,
        memberId: member.id,
        role: member.role,
        name: member.name,
        email: member.email,
        sessionId: session.id,
      },
      session,
      member,
      orgName,
      csrfToken,
    },
  };
}

/**
 * The seam with the admin route table: null without a session cookie (the next resolver,
 * or `unauthorized`, decides), a refusal for a dead session or a failed CSRF check, else the
 * member principal.
 */
export async function resolveSessionPrincipal(
  request: HttpRequest,
  deps: IngressDeps,
): Promise<{ principal: Principal } | { refusal: HttpReply } | null> {
  const resolved = await resolveSession(request, deps);
  if (resolved.kind === "none") return null;
  if (resolved.kind === "refused") return { refusal: resolved.reply };
  return { principal: resolved.live.principal };
}
