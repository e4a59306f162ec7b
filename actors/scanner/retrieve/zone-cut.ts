/**
 * The zone a domain belongs to, found by DNS as a resolver finds it: ask the SOA of the
 * name; an SOA record owned by the name makes it a zone apex, and a negative answer
 * names its zone by the SOA in its authority section (RFC 2308 3). Only when neither
 * says anything (a server that omits the authority SOA) do we walk up one label and ask
 * again. The public suffix list cannot do this: a delegated `child.example.com` is a zone
 * of its own, signed or not, whatever the registrable domain is.
 */
import { getDomain } from "tldts";
import type { DnsQuery } from "../../../shared/platform/net/outbound/dns-client.js";
import type { CheckedAnswer, DnsAnswer, RecordType } from "../../../shared/platform/net/outbound/evidence.js";

export interface ZoneCut {
  readonly zone: string;
  readonly source: "soa" | "public-suffix";
  /** The domain's own SOA answer (DO, then CD after a SERVFAIL): DNSSEC judges it. */
  readonly own: CheckedAnswer;
}

/** Registrable domain by the public suffix list (DMARC's organizational domain, RFC 7489 3.2). */
export function organizationalDomain(domain: string): string {
  return getDomain(domain, { allowPrivateDomains: false }) ?? domain;
}

/** Asks with DO; after a SERVFAIL asks again with CD, which tells bogus signatures from a broken server. */
export async function askChecked(ask: DnsQuery, name: string, type: RecordType): Promise<CheckedAnswer> {
  const answer = await ask(name, type, { dnssecOk: true });
  if (answer.status !== "servfail") return { answer, unchecked: null };
  return { answer, unchecked: await ask(name, type, { dnssecOk: true, checkingDisabled: true }) };
}

/** The answer that tells the zone: the validated one, or the unchecked one when validation failed. */
function usable({ answer, unchecked }: CheckedAnswer): DnsAnswer {
  return answer.status === "servfail" && unchecked ? unchecked : answer;
}

function isWithin(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** The zone this answer for `name` names, or null when it does not tell. */
export function zoneFromAnswer(name: string, answer: DnsAnswer): string | null {
  if (answer.status !== "noerror" && answer.status !== "nxdomain") return null;
  // An alias is never a zone apex, and the SOA after it belongs to the target's zone.
  if (answer.aliases.length > 0) return null;
  if (answer.records.some((r) => r.type === "SOA" && r.name === name)) return name;
  if (answer.authoritySoa !== null && answer.authoritySoa !== "" && isWithin(name, answer.authoritySoa)) return answer.authoritySoa;
  return null;
}

function parentOf(name: string): string | null {
  const dot = name.indexOf(".");
  return dot < 0 ? null : name.slice(dot + 1);
}

/**
 * Names asked above the domain at most. Each step may cost two queries (DO, then CD after a
 * SERVFAIL): a long name under a server that answers SERVFAIL slowly would otherwise cost
 * one step per label, up to 126 of them.
 */
export const MAX_ZONE_WALK = 10;

/**
 * The walk stops at the registrable domain: a zone above it is a public suffix, never the
 * customer's zone, and asking there says nothing the fallback does not.
 */
export async function findZoneCut(domain: string, ask: DnsQuery): Promise<ZoneCut> {
  const own = await askChecked(ask, domain, "SOA");
  const registrable = organizationalDomain(domain);
  let name = domain;
  let current = usable(own);
  for (let step = 0; ; step++) {
    const zone = zoneFromAnswer(name, current);
    if (zone) return { zone, source: "soa", own };
    if (current.status !== "noerror" && current.status !== "nxdomain" && current.status !== "servfail") break;
    const parent = parentOf(name);
    if (step >= MAX_ZONE_WALK || name === registrable || parent === null || !isWithin(parent, registrable)) break;
    name = parent;
    current = usable(await askChecked(ask, name, "SOA"));
  }
  return { zone: registrable, source: "public-suffix", own };
}
