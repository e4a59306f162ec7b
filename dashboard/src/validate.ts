/**
 * The key settings' rules, checked in the browser before a call so a mistake is said next to
 * its field (the server checks again and its refusal is shown the same way). They follow
 * shared/validation.ts and ingress/admin/keys.ts: CIDR blocks, ISO 3166-1 alpha-2 codes,
 * scope names, the per-minute rate.
 */

function isIpv4(text: string): boolean {
  const parts = text.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

function isIpv6(text: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return false;
  try {
    // The URL parser knows IPv6 (compressed forms, embedded IPv4) exactly.
    return new URL(`http://[${text}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

/** An address or a CIDR block (`203.0.113.0/24`, `2001:db8::/32`). */
export function cidrProblem(raw: string): string | null {
  const [address, prefix, extra] = raw.split("/");
  if (extra !== undefined) return `"${raw}" has more than one "/"`;
  const v4 = isIpv4(address);
  if (!v4 && !isIpv6(address)) return `"${raw}" is not an IPv4 or IPv6 address`;
  if (prefix === undefined) return null;
  const max = v4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `"${raw}": the prefix length is 0 to ${max}`;
  return null;
}

/** Retired and non-country codes the server refuses (shared/validation.ts). */
const NOT_COUNTRIES = new Set(["AC", "CP", "CQ", "DG", "EA", "EU", "EZ", "IC", "QO", "TA", "UN", "XA", "XB", "ZZ", "UK", "SU", "YU", "DD"]);

export function countryProblem(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return `"${code}" is not a two-letter country code`;
  if (NOT_COUNTRIES.has(code)) return `"${code}" is not a current ISO 3166-1 country code`;
  return null;
}

export function scopeProblem(scope: string): string | null {
  return /^[A-Za-z0-9_.:-]{1,64}$/.test(scope) ? null : `"${scope}": scopes are 1 to 64 letters, digits or _ . : -`;
}

export function rateProblem(raw: string): string | null {
  if (!/^\d{1,8}$/.test(raw.trim())) return "A whole number of calls per minute, 1 to 10,000,000.";
  const n = Number(raw);
  return n >= 1 && n <= 10_000_000 ? null : "A whole number of calls per minute, 1 to 10,000,000.";
}

export function urlProblem(raw: string): string | null {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:" ? null : "Only http and https addresses.";
  } catch {
    return "Not a full address (https://…).";
  }
}

export function domainProblem(raw: string): string | null {
  const name = raw.trim().toLowerCase().replace(/\.$/, "");
  if (name.length > 253 || !/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/.test(name))
    return "Not a domain name (example.com).";
  return null;
}

/** A list typed one per line or separated by commas or spaces, without blanks or repeats. */
export function listOf(raw: string): string[] {
  return [
    ...new Set(
      raw
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

export function firstProblem(items: string[], check: (item: string) => string | null): string | null {
  for (const item of items) {
    const problem = check(item);
    if (problem) return problem;
  }
  return null;
}

/** The field a server refusal is about: `bad_<field>`, or the first segment of its detail's path (`/ip_allow/2 must match format "cidr"`). */
export function fieldOfRefusal(reason: string, detail: string | undefined): string | null {
  const fromDetail = /^\/([a-z_]+)/.exec(detail ?? "")?.[1];
  if (fromDetail) return fromDetail;
  const fromReason = /^(?:bad|missing)_([a-z_]+)$/.exec(reason)?.[1];
  return fromReason ?? null;
}
