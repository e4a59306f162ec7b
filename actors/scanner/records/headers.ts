/**
 * Reading response headers: lookups over the raw pairs, HSTS (RFC 6797 6.1) and
 * Referrer-Policy (W3C Referrer Policy 4.1, 11.1).
 */
import type { HttpExchange } from "../../../shared/platform/net/outbound/evidence.js";

export function headerValues(exchange: HttpExchange, name: string): string[] {
  const wanted = name.toLowerCase();
  return exchange.headers.filter(([n]) => n === wanted).map(([, v]) => v);
}

export function firstHeader(exchange: HttpExchange, name: string): string | null {
  return headerValues(exchange, name)[0] ?? null;
}

/** The header as a response line, the way a finding shows it. */
export function headerLine(name: string, value: string): string {
  return `${name}: ${value}`;
}

export interface ParsedHsts {
  readonly maxAge: number | null;
  readonly includeSubDomains: boolean;
  readonly preload: boolean;
  readonly errors: readonly string[];
}

export function parseHsts(value: string): ParsedHsts {
  const errors: string[] = [];
  const seen = new Set<string>();
  let maxAge: number | null = null;
  for (const raw of value.split(";")) {
    const directive = raw.trim();
    if (directive === "") continue;
    const [nameRaw, ...rest] = directive.split("=");
    const name = nameRaw.trim().toLowerCase();
    // RFC 6797 6.1: a directive appearing twice makes the whole header invalid.
    if (seen.has(name)) errors.push(`${name} appears twice`);
    seen.add(name);
    if (name === "max-age") {
      const v = rest
        .join("=")
        .trim()
        .replace(/^"(.*)"$/, "$1");
      if (/^\d+$/.test(v)) maxAge = Number(v);
      else errors.push(`max-age=${v} is not a number of seconds`);
    }
  }
  if (!seen.has("max-age")) errors.push("max-age is missing");
  return { maxAge, includeSubDomains: seen.has("includesubdomains"), preload: seen.has("preload"), errors };
}

export const REFERRER_POLICIES = [
  "no-referrer",
  "no-referrer-when-downgrade",
  "same-origin",
  "origin",
  "strict-origin",
  "origin-when-cross-origin",
  "strict-origin-when-cross-origin",
  "unsafe-url",
] as const;
export type ReferrerPolicy = (typeof REFERRER_POLICIES)[number];

/** Browsers take the last token they understand, so a fallback list works (spec 11.1). */
export function effectiveReferrerPolicy(values: readonly string[]): ReferrerPolicy | null {
  let policy: ReferrerPolicy | null = null;
  for (const token of values.flatMap((v) => v.split(","))) {
    const known = REFERRER_POLICIES.find((p) => p === token.trim().toLowerCase());
    if (known) policy = known;
  }
  return policy;
}
