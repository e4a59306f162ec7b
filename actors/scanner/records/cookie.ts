/** Set-Cookie (RFC 6265 4.1, and the name prefixes of RFC 6265bis 4.1.3). */

export interface ParsedCookie {
  readonly name: string;
  readonly secure: boolean;
  readonly httpOnly: boolean;
  /** As written, lower-cased; null when absent. */
  readonly sameSite: string | null;
  readonly path: string | null;
  readonly domain: string | null;
  readonly line: string;
}

export function parseSetCookie(line: string): ParsedCookie {
  const [pair, ...attributes] = line.split(";");
  const eq = pair.indexOf("=");
  const name = (eq >= 0 ? pair.slice(0, eq) : pair).trim();
  let secure = false;
  let httpOnly = false;
  let sameSite: string | null = null;
  let path: string | null = null;
  let domain: string | null = null;
  for (const attribute of attributes) {
    const [rawKey, ...rest] = attribute.split("=");
    const key = rawKey.trim().toLowerCase();
    const value = rest.join("=").trim();
    if (key === "secure") secure = true;
    else if (key === "httponly") httpOnly = true;
    else if (key === "samesite") sameSite = value.toLowerCase();
    else if (key === "path") path = value;
    else if (key === "domain") domain = value;
  }
  return { name, secure, httpOnly, sameSite, path, domain, line };
}

/**
 * Cookies that probably carry a session or credential: those are the ones whose theft
 * or cross-site sending matters. A name heuristic, as Observatory uses.
 */
export function isSessionLike(name: string): boolean {
  return /sess|sid$|^sid|auth|token|jwt|login|logged|remember|user|account|csrf|xsrf|secret/i.test(name);
}
