/**
 * DNS evidence for the `dns` section: one pass of queries, most of them in parallel,
 * then the follow-ups that depend on their answers (MX hosts, the SPF tree, CNAME
 * targets, the MTA-STS policy file). Checks never query; they read what is gathered here.
 * Addresses reach the evidence only when the scan's address policy accepts them
 * (public-addresses.ts); the caller bounds the whole retrieval in time (deadline.ts).
 */
import PQueue from "p-queue";
import type { ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { spfKey, walkSpf } from "../records/spf.js";
import { isMtaStsTxt } from "../records/mail-tls.js";
import { joinTxt } from "../records/tags.js";
import { createDnsClient, type DnsQuery, normalizeName } from "../../../shared/platform/net/outbound/dns-client.js";
import type {
  CnameLookup,
  DkimLookup,
  DnsAnswer,
  DnsEvidence,
  HttpExchange,
  MxHostLookup,
  RecordType,
} from "../../../shared/platform/net/outbound/evidence.js";
import { fetchOnce, type HttpContext } from "../../../shared/platform/net/outbound/http-client.js";
import { dnsHostResolver } from "../../../shared/platform/net/outbound/ssrf.js";
import { evidenceQuery } from "./public-addresses.js";
import { askChecked, findZoneCut, organizationalDomain } from "./zone-cut.js";

/** Selectors of common providers and defaults; DKIM offers no way to list a domain's selectors. */
export const DKIM_SELECTORS = ["default", "selector1", "selector2", "google", "k1", "s1", "s2", "mail", "dkim"] as const;
/** Names most often left pointing at deprovisioned services (subdomain takeover). */
export const CNAME_PROBES = ["www", "mail", "blog", "shop", "app", "cdn", "status", "docs"] as const;

const CONCURRENCY = 16;
const MAX_MX_HOSTS = 10;
/** The lookup limit is 10; a few rounds past it are enough to show the excess. */
const MAX_SPF_QUERIES = 40;
const MAX_SPF_ROUNDS = 12;

/** Names from the domain up to `zone` (its registrable domain for CAA tree climbing), nearest first. */
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
  const orgDomain = organizationalDomain(domain);
  const queue = new PQueue({ concurrency: CONCURRENCY });
  const raw = query ?? createDnsClient(options.resolver, options.timeoutMs);
  const queued: DnsQuery = (name, type, flags) => queue.add(() => raw(name, type, flags));
  // Everything asked here is evidence, except the MTA-STS host's addresses, which the SSRF guard judges itself.
  const ask = evidenceQuery(queued, options.outbound);

  // The domain's own answers are asked with DO: their AD flags are the DNSSEC verdict.
  const [cut, a, aaaa, mx, txt, dmarc, dmarcZone, mtaStsTxt, tlsRpt] = await Promise.all([
    findZoneCut(domain, ask),
    askChecked(ask, domain, "A"),
    askChecked(ask, domain, "AAAA"),
    askChecked(ask, domain, "MX"),
    askChecked(ask, domain, "TXT"),
    ask(`_dmarc.${domain}`, "TXT"),
    orgDomain === domain ? Promise.resolve(null) : ask(`_dmarc.${orgDomain}`, "TXT"),
    ask(`_mta-sts.${domain}`, "TXT"),
    ask(`_smtp._tls.${domain}`, "TXT"),
  ]);
  const zone = cut.zone;
  const nsPromise = ask(zone, "NS");
  const dnskeyPromise = askChecked(ask, zone, "DNSKEY");
  const dkimPromise = Promise.all(
    DKIM_SELECTORS.map(
      async (selector): Promise<DkimLookup> => ({ selector, answer: await ask(`${selector}._domainkey.${domain}`, "TXT") }),
    ),
  );
  const caaPromise = Promise.all(namesUpToZone(domain, orgDomain).map((name) => ask(name, "CAA")));
  const cnamePromise = Promise.all([domain, ...CNAME_PROBES.map((p) => `${p}.${domain}`)].map((name) => lookupCname(name, ask)));
  const exchanges = [...new Set(mx.answer.records.flatMap((r) => (r.type === "MX" && r.exchange !== "" ? [r.exchange] : [])))];
  const mxPromise = Promise.all(exchanges.slice(0, MAX_MX_HOSTS).map((exchange) => lookupMxHost(exchange, ask)));
  const spfPromise = collectSpf(domain, txt.answer, ask);
  const hasStsRecord = mtaStsTxt.records.some((r) => r.type === "TXT" && isMtaStsTxt(joinTxt(r.strings)));
  const policyPromise = hasStsRecord ? fetchMtaStsPolicy(domain, options, queued) : Promise.resolve(null);

  const [ns, dnskey, dkim, caa, cnames, mxHosts, spf, mtaStsPolicy] = await Promise.all([
    nsPromise,
    dnskeyPromise,
    dkimPromise,
    caaPromise,
    cnamePromise,
    mxPromise,
    spfPromise,
    policyPromise,
  ]);
  return {
    domain,
    zone,
    zoneSource: cut.source,
    organizationalDomain: orgDomain,
    retrievedAt: now,
    a: a.answer,
    aaaa: aaaa.answer,
    ns,
    mx: mx.answer,
    mxHosts,
    txt: txt.answer,
    spf,
    dmarc,
    dmarcZone,
    dkim,
    mtaStsTxt,
    mtaStsPolicy,
    tlsRpt,
    caa,
    cnames,
    dnssec: { answers: [cut.own, a, aaaa, mx, txt], dnskey },
  };
}
