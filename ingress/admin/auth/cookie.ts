import type { IngressDeps } from "../../deps.js";
import type { HttpRequest } from "../../types.js";

/**
 * The session cookie and the site it belongs to. HttpOnly (no script reads it), SameSite=Lax
 * (no cross-site subrequest carries it), Path=/, and on an https site Secure with the
 * `__Host-` prefix, which browsers accept only from a secure origin, without Domain and with
 * Path=/: no sibling subdomain can plant or overwrite it. Max-Age is the session's absolute
 * end; the idle lifetime is judged by the service on every request.
 */

/** SITE_URL, with the port chosen at listen time when PORT=0. */
export function siteOf(deps: IngressDeps): string {
  return deps.baseUrl().replace(/\/api\/v1$/, "");
}

export function siteOrigin(deps: IngressDeps): string {
  return new URL(siteOf(deps)).origin;
}

function secure(site: string): boolean {
  return site.startsWith("https:");
}

export function cookieName(site: string): string {
  return secure(site) ? "__Host-gw_session" : "gw_session";
}

export function sessionCookie(site: string, token: string, maxAgeS: number): string {
  return `${cookieName(site)}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeS))}${secure(site) ? "; Secure" : ""}`;
}

/** Tells the browser to drop the cookie (sign-out, a dead session). */
export function clearedCookie(site: string): string {
  return sessionCookie(site, "", 0);
}

/** The session cookie's value, or null when the request carries none. */
export function readSessionCookie(request: HttpRequest, site: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const name = cookieName(site);
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
