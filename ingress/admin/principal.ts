import { type Principal, isWellFormedOrgToken, looksLikeOrgToken, tokenByHash, touchToken } from "../../shared/accounts/index.js";
import { safeEqual, sha256 } from "../../shared/platform/crypto/hash.js";
import type { IngressDeps } from "../deps.js";
import { refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { resolveSessionPrincipal } from "./session-principal.js";

/**
 * Who is calling the admin API (operator-api.md section 5, docs/accounts.md), resolved
 * once per request by the route wrapper (common.ts `guarded`):
 *
 * 1. `Authorization: Bearer` equal to ADMIN_TOKEN (constant-time): the operator.
 * 2. `Authorization: Bearer gwt_...`: an organization token, looked up by its SHA-256 on
 *    every call (no cache, so a revocation holds from the next call on). A malformed token
 *    or a bad checksum is refused before any lookup; an unknown, expired or revoked one is
 *    401 `unauthorized`.
 * 3. Otherwise the member's dashboard session (session-principal.ts: the cookie, its
 *    lifetimes, and the CSRF check on a state change).
 *
 * With ADMIN_TOKEN unset, a caller that is neither an organization token nor a session is
 * answered 503 `admin_disabled` as before; organization tokens and sessions work either way.
 */

/** Milliseconds between two writes of a token's last_used_at (the bound on those writes). */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

export type Resolution = { principal: Principal } | { refusal: HttpReply };

function bearerOf(request: HttpRequest): string | null {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
  return match ? match[1].trim() : null;
}

async function resolveOrgToken(deps: IngressDeps, token: string): Promise<Resolution> {
  if (!isWellFormedOrgToken(token)) return { refusal: refuse("unauthorized") };
  const row = await tokenByHash(deps.db, sha256(token));
  const now = deps.clock.now();
  if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at.getTime() <= now)) {
    return { refusal: refuse("unauthorized") };
  }
  if (row.last_used_at === null || row.last_used_at.getTime() <= now - TOKEN_TOUCH_INTERVAL_MS) await touchToken(deps.db, row.id, now);
  return {
    principal: { kind: "token", orgId: row.org_id, orgName: row.org_name, tokenId: row.id, tokenName: row.name, scopes: row.scopes },
  };
}

export async function resolvePrincipal(request: HttpRequest, deps: IngressDeps): Promise<Resolution> {
  const adminToken = deps.config.adminToken;
  const noOne = (): Resolution => ({ refusal: refuse(adminToken ? "unauthorized" : "admin_disabled") });
  const bearer = bearerOf(request);
  if (bearer !== null) {
    if (adminToken && safeEqual(bearer, adminToken)) return { principal: { kind: "operator" } };
    if (looksLikeOrgToken(bearer)) return resolveOrgToken(deps, bearer);
    return noOne();
  }
  return (await resolveSessionPrincipal(request, deps)) ?? noOne();
}

/**
 * Who the activity record names for a change (interface.md 2.8): the operator, the
 * token's name, or the member's name and e-mail. Never an address.
 */
export function whoOf(principal: Principal): string {
  switch (principal.kind) {
    case "operator":
      return "operator";
    case "token":
      return `token:${principal.tokenName}`;
    case "member":
      return `${principal.name} <${principal.email}>`;
  }
}
