/**
 * SPF (RFC 7208) syntax and the counting rules of section 4.6.4. Pure: the walk asks a
 * lookup function for DNS answers, so retrieval can run it to learn which names to
 * query next, and the check can run it again over the finished evidence.
 */
import type { DnsAnswer } from "../../../shared/platform/net/outbound/evidence.js";
import { joinTxt } from "./tags.js";

export type Qualifier = "+" | "-" | "~" | "?";
const MECHANISMS = ["all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists"] as const;
export type MechanismName = (typeof MECHANISMS)[number];

export type SpfTerm =
  | {
      readonly kind: "mechanism";
      readonly qualifier: Qualifier;
      readonly name: MechanismName;
      readonly domain: string | null;
      readonly text: string;
    }
  | { readonly kind: "modifier"; readonly name: string; readonly value: string; readonly text: string };

export interface ParsedSpf {
  readonly terms: readonly SpfTerm[];
  readonly errors: readonly string[];
}

/** RFC 7208 4.6.4: at most 10 terms that cause DNS queries, at most 2 of them void. */
export const SPF_LOOKUP_LIMIT = 10;
export const SPF_VOID_LIMIT = 2;
/** Past this the verdict cannot change; stop walking so a hostile tree stays cheap. */
const WALK_CEILING = 20;
const MAX_DEPTH = 10;

export function isSpfRecord(text: string): boolean {
  return /^v=spf1(\s|$)/i.test(text);
}

/** SPF records among TXT answers; `v=spf10` or other TXT do not count (RFC 7208 4.5). */
export function spfRecords(answer: DnsAnswer): string[] {
  return answer.records.flatMap((r) => (r.type === "TXT" ? [joinTxt(r.strings)] : [])).filter(isSpfRecord);
}

const MACRO = /%(\{[slodiphcrtv]\d*r?[-.+,/_=]*\}|%|_|-)/gi;

function hasMacro(spec: string): boolean {
  return spec.includes("%");
}

function validDomainSpec(spec: string): boolean {
  if (spec === "") return false;
  const withoutMacros = spec.replace(MACRO, "x");
  if (withoutMacros.includes("%")) return false;
  return /^[\x21-\x7e]+$/.test(withoutMacros) && (hasMacro(spec) || /^[a-z0-9_.-]+\.?$/i.test(spec));
}

function validCidr(cidr: string | undefined, max: number): boolean {
  return cidr === undefined || (/^\d{1,3}$/.test(cidr) && Number(cidr) <= max);
}

function parseMechanism(term: string, errors: string[]): SpfTerm | null {
  const match = /^([-+~?]?)([a-z0-9]+)(?::([^/]*))?(?:\/(\d*))?(?:\/\/(\d*))?$/i.exec(term);
  if (!match) {
    errors.push(`"${term}" is not a valid mechanism`);
    return null;
  }
  const [, q, rawName, arg, cidr4, cidr6] = match;
  const name = rawName.toLowerCase();
  const mechanism = MECHANISMS.find((m) => m === name);
  if (!mechanism) {
    errors.push(`unknown mechanism "${rawName}"`);
    return null;
  }
  const qualifier: Qualifier = q === "-" || q === "~" || q === "?" ? q : "+";
  const bad = (why: string) => {
    errors.push(`"${term}": ${why}`);
    return null;
  };
  if (mechanism === "all" && (arg !== undefined || cidr4 !== undefined)) return bad("all takes no argument");
  if ((mechanism === "include" || mechanism === "exists") && (!arg || !validDomainSpec(arg))) return bad("needs a domain");
  if ((mechanism === "a" || mechanism === "mx" || mechanism === "ptr") && arg !== undefined && !validDomainSpec(arg)) {
    return bad("invalid domain");
  }
  if ((mechanism === "a" || mechanism === "mx") && (!validCidr(cidr4, 32) || !validCidr(cidr6, 128))) return bad("invalid prefix length");
  if (
    mechanism === "ip4" &&
    !(arg && /^(\d{1,3}\.){3}\d{1,3}$/.test(arg) && arg.split(".").every((o) => Number(o) <= 255) && validCidr(cidr4, 32))
  ) {
    return bad("invalid IPv4 network");
  }
  if (mechanism === "ip6") {
    const ip6 = /^ip6:([0-9a-f:.]+)(?:\/(\d{1,3}))?$/i.exec(term.replace(/^[-+~?]/, ""));
    if (!ip6?.[1].includes(":") || !validCidr(ip6[2], 128)) return bad("invalid IPv6 network");
  }
  const takesDomain = mechanism === "include" || mechanism === "exists" || mechanism === "a" || mechanism === "mx" || mechanism === "ptr";
  return { kind: "mechanism", qualifier, name: mechanism, domain: takesDomain ? (arg ?? null) : null, text: term };
}

export function parseSpf(record: string): ParsedSpf {
  const errors: string[] = [];
  const terms: SpfTerm[] = [];
  const parts = record.trim().split(/ +/);
  if (!isSpfRecord(record)) return { terms, errors: ["does not start with v=spf1"] };
  const seenModifiers = new Set<string>();
  for (const part of parts.slice(1)) {
    const modifier = /^([a-z][a-z0-9_.-]*)=(.*)$/i.exec(part);
    if (modifier) {
      const name = modifier[1].toLowerCase();
      // RFC 7208 6: redirect and exp may appear once each; other modifiers are ignored.
      if ((name === "redirect" || name === "exp") && seenModifiers.has(name)) errors.push(`${name}= appears twice`);
      if ((name === "redirect" || name === "exp") && !validDomainSpec(modifier[2])) errors.push(`"${part}": invalid domain`);
      seenModifiers.add(name);
      terms.push({ kind: "modifier", name, value: modifier[2], text: part });
      continue;
    }
    const mechanism = parseMechanism(part, errors);
    if (mechanism) terms.push(mechanism);
  }
  return { terms, errors };
}

export type SpfKeyKind = "txt" | "a" | "mx";
export function spfKey(kind: SpfKeyKind, name: string): string {
  return `${kind}:${name.toLowerCase().replace(/\.$/, "")}`;
}

export type SpfLookupFn = (key: string) => DnsAnswer | undefined;

export interface SpfWalk {
  /** Terms that cost a DNS lookup, counted across includes and redirects. */
  readonly lookups: number;
  readonly voidLookups: number;
  /** Conditions that make evaluation a permerror or temperror beyond the apex syntax. */
  readonly errors: readonly string[];
  /** One line per counted term, for the finding detail. */
  readonly trail: readonly string[];
  /** Keys the walk needed but the lookup did not have (retrieval queries them). */
  readonly missing: readonly string[];
}

const isFailure = (a: DnsAnswer) => a.status !== "noerror" && a.status !== "nxdomain";
const isVoid = (a: DnsAnswer) => a.status === "nxdomain" || (a.status === "noerror" && a.records.length === 0);

/**
 * Walks the SPF tree from `domain`. Each include, a, mx, ptr, exists and redirect counts
 * one lookup wherever it sits (RFC 7208 4.6.4), so an include reached twice counts twice.
 * Terms with macros are counted but not followed: their target depends on the sender.
 */
export function walkSpf(domain: string, get: SpfLookupFn): SpfWalk {
  let lookups = 0;
  let voidLookups = 0;
  const errors: string[] = [];
  const trail: string[] = [];
  const missing = new Set<string>();

  const fetch = (key: string): DnsAnswer | undefined => {
    const answer = get(key);
    if (!answer) missing.add(key);
    return answer;
  };
  const countVoid = (answer: DnsAnswer | undefined) => {
    if (answer && isVoid(answer)) voidLookups++;
  };

  const visit = (name: string, path: readonly string[]): void => {
    const answer = fetch(spfKey("txt", name));
    if (!answer) return;
    if (isFailure(answer)) {
      errors.push(`TXT lookup of ${name} failed (${answer.error ?? answer.status})`);
      return;
    }
    const records = spfRecords(answer);
    if (records.length !== 1) {
      errors.push(records.length === 0 ? `${name} has no SPF record` : `${name} has ${records.length} SPF records`);
      return;
    }
    const parsed = parseSpf(records[0]);
    for (const error of parsed.errors) errors.push(`${name}: ${error}`);
    const hasAll = parsed.terms.some((t) => t.kind === "mechanism" && t.name === "all");
    for (const term of parsed.terms) {
      if (lookups > WALK_CEILING) return;
      const counted =
        term.kind === "mechanism" ? term.name !== "all" && term.name !== "ip4" && term.name !== "ip6" : term.name === "redirect";
      // RFC 7208 6.1: redirect is ignored when the record has an all mechanism.
      if (!counted || (term.kind === "modifier" && hasAll)) continue;
      lookups++;
      trail.push(`${name}: ${term.text} (${lookups})`);
      const target = term.kind === "modifier" ? term.value : (term.domain ?? name);
      if (hasMacro(target)) continue;
      const kind = term.kind === "modifier" ? "redirect" : term.name;
      if (kind === "include" || kind === "redirect") {
        if (path.includes(target.toLowerCase()) || path.length >= MAX_DEPTH) {
          errors.push(`${name}: ${term.text} loops back`);
          continue;
        }
        const inner = fetch(spfKey("txt", target));
        countVoid(inner);
        if (inner) visit(target, [...path, target.toLowerCase()]);
      } else if (kind === "a" || kind === "exists") {
        countVoid(fetch(spfKey("a", target)));
      } else if (kind === "mx") {
        countVoid(fetch(spfKey("mx", target)));
      }
      // ptr: the query needs the sender's address; it is counted, not resolved.
    }
  };
  visit(domain, [domain.toLowerCase()]);
  return { lookups, voidLookups, errors, trail, missing: [...missing] };
}

/**
 * The `all` that ends evaluation for this domain: its own, or the one of the record a
 * `redirect=` hands over to. Null when neither has one (the result is then neutral).
 */
export function effectiveAll(domain: string, get: SpfLookupFn): { qualifier: Qualifier; source: string } | null {
  let name = domain;
  for (let hop = 0; hop <= MAX_DEPTH; hop++) {
    const answer = get(spfKey("txt", name));
    const records = answer ? spfRecords(answer) : [];
    if (records.length !== 1) return null;
    const { terms } = parseSpf(records[0]);
    const all = terms.find((t) => t.kind === "mechanism" && t.name === "all");
    if (all && all.kind === "mechanism") return { qualifier: all.qualifier, source: name };
    const redirect = terms.find((t) => t.kind === "modifier" && t.name === "redirect");
    if (redirect?.kind !== "modifier" || hasMacro(redirect.value)) return null;
    name = redirect.value;
  }
  return null;
}
