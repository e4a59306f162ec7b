/**
 * DNS evidence for the `dns` section: one pass of queries, most of them in parallel,
 * then the follow-ups that depend on their answers (MX hosts, the SPF tree, CNAME
 * targets, the MTA-STS policy file). Checks never query; they read what is gathered here.
 */
import PQueue from "p-queue";
import { getDomain } from "tldts";
import type { ScanOptions } from "../options.js";
import { spfKey, walkSpf } from "../records/spf.js";
import { isMtaStsTxt } from "../records/mail-tls.js";
import { joinTxt } from "../records/tags.js";
import { createDnsClient, type DnsQuery, normalizeName } from "./dns-client.js";
import type { CnameLookup, DkimLookup, DnsAnswer, DnsEvidence, HttpExchange, MxHostLookup, RecordType } from "./evidence.js";
import { fetchOnce, type HttpContext } from "./http-client.js";
import { dnsHostResolver } from "./ssrf.js";

/** Selectors of common providers and defaults; DKIM offers no way to list a domain's selectors. */
export const DKIM_SELECTORS = ["default", "selector1", "selector2", "google", "k1", "s1", "s2", "mail", "dkim"] as const;
/** Names most often left pointing at deprovisioned services (subdomain takeover). */
export const CNAME_PROBES = ["www", "mail", "blog", "shop", "app", "cdn", "status", "docs"] as const;

const CONCURRENCY = 16;
const MAX_MX_HOSTS = 10;
/** The lookup limit is 10; a few rounds past it are enough to show the excess. */
const MAX_SPF_QUERIES = 40;
const MAX_SPF_ROUNDS = 12;

/** Names from the domain up to its registrable domain, nearest first (CAA tree climbing). */
export function namesUpToZone(domain: string, zone: string): string[] {
  const names: string[] = [];
  let name = domain;
  while (name.length >= zone.length) {
    names.push(name);
    if (name === zone || !name.includes(".")) break;
    name = name.slice(name.indexOf(".") + 1);
  }
  return names;
}

export function zoneOf(domain: string): string {
  return getDomain(domain, { allowPrivateDomains: false }) ?? domain;
}

function spfKeyQuery(key: string): { name: string; type: RecordType } {
  const [kind, ...rest] = key.split(":");
  const name = rest.join(":");
  return { name, type: kind === "mx" ? "MX" : kind === "a" ? "A" : "TXT" };
}

async function collectSpf(domain: string, apexTxt: DnsAnswer, query: DnsQuery): Promise<Record<string, DnsAnswer>> {
  const answers: Record<string, DnsAnswer> = { [spfKey("txt", domain)]: apexTxt };
  let spent = 0;
  for (let round = 0; round < MAX_SPF_ROUNDS && spent < MAX_SPF_QUERIES; round++) {
    const { missing } = walkSpf(domain, (key) => answers[key]);
    if (missing.length === 0) break;
    const batch = missing.slice(0, MAX_SPF_QUERIES - spent);
    spent += batch.length;
    const results = await Promise.all(batch.map((key) => query(spfKeyQuery(key).name, spfKeyQuery(key).type)));
    batch.forEach((key, i) => {
      answers[key] = results[i];
    });
  }
  return answers;
}

async function lookupCname(name: string, query: DnsQuery): Promise<CnameLookup> {
  const cname = await query(name, "CNAME");
  const record = cname.records.find((r) => r.type === "CNAME");
  if (record?.type !== "CNAME") return { name, cname, target: null };
  return { name, cname, target: await query(record.target, "A") };
}

async function lookupMxHost(exchange: string, query: DnsQuery): Promise<MxHostLookup> {
  const [a, aaaa] = await Promise.all([query(exchange, "A"), query(exchange, "AAAA")]);
  return { exchange, a, aaaa };
}

/** RFC 8461 3.3: the policy is fetched over HTTPS from `mta-sts.<domain>`, without following redirects. */
async function fetchMtaStsPolicy(domain: string, options: ScanOptions, query: DnsQuery): Promise<HttpExchange> {
  const context: HttpContext = { options, resolveHost: dnsHostResolver(query) };
  return fetchOnce(new URL(`https://mta-sts.${domain}/.well-known/mta-sts.txt`), context, { headers: { accept: "text/plain" } });
}

export async function retrieveDns(domainInput: string, options: ScanOptions, now: number, query?: DnsQuery): Promise<DnsEvidence> {
  const domain = normalizeName(domainInput);
  const zone = zoneOf(domain);
  const queue = new PQueue({ concurrency: CONCURRENCY });
  const raw = query ?? createDnsClient(options.resolver, options.timeoutMs);
  const ask: DnsQuery = (name, type, flags) => queue.add(() => raw(name, type, flags));

  const [a, aaaa, ns, mx, txt, dmarc, dmarcZone, mtaStsTxt, tlsRpt, soa, dnskey] = await Promise.all([
    ask(domain, "A"),
    ask(domain, "AAAA"),
    ask(zone, "NS"),
    ask(domain, "MX"),
    ask(domain, "TXT"),
    ask(`_dmarc.${domain}`, "TXT"),
    zone === domain ? Promise.resolve(null) : ask(`_dmarc.${zone}`, "TXT"),
    ask(`_mta-sts.${domain}`, "TXT"),
    ask(`_smtp._tls.${domain}`, "TXT"),
    ask(zone, "SOA", { dnssecOk: true }),
    ask(zone, "DNSKEY", { dnssecOk: true }),
  ]);
  const dkimPromise = Promise.all(
    DKIM_SELECTORS.map(async (selector): Promise<DkimLookup> => ({ selector, answer: await ask(`${selector}._domainkey.${domain}`, "TXT") })),
  );
  const caaPromise = Promise.all(namesUpToZone(domain, zone).map((name) => ask(name, "CAA")));
  const cnamePromise = Promise.all([domain, ...CNAME_PROBES.map((p) => `${p}.${domain}`)].map((name) => lookupCname(name, ask)));
  const exchanges = [...new Set(mx.records.flatMap((r) => (r.type === "MX" && r.exchange !== "" ? [r.exchange] : [])))];
  const mxPromise = Promise.all(exchanges.slice(0, MAX_MX_HOSTS).map((exchange) => lookupMxHost(exchange, ask)));
  const spfPromise = collectSpf(domain, txt, ask);
  // RFC 4035 3.2.2: only when the validating answer failed is the unchecked one informative.
  const uncheckedPromise = soa.status === "servfail" ? ask(zone, "SOA", { dnssecOk: true, checkingDisabled: true }) : Promise.resolve(null);
  const hasStsRecord = mtaStsTxt.records.some((r) => r.type === "TXT" && isMtaStsTxt(joinTxt(r.strings)));
  const policyPromise = hasStsRecord ? fetchMtaStsPolicy(domain, options, ask) : Promise.resolve(null);

  const [dkim, caa, cnames, mxHosts, spf, soaUnchecked, mtaStsPolicy] = await Promise.all([
    dkimPromise,
    caaPromise,
    cnamePromise,
    mxPromise,
    spfPromise,
    uncheckedPromise,
    policyPromise,
  ]);
  return {
    domain,
    zone,
    retrievedAt: now,
    a,
    aaaa,
    ns,
    mx,
    mxHosts,
    txt,
    spf,
    dmarc,
    dmarcZone,
    dkim,
    mtaStsTxt,
    mtaStsPolicy,
    tlsRpt,
    caa,
    cnames,
    dnssec: { soa, soaUnchecked, dnskey },
  };
}
