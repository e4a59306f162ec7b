/**
 * Web evidence for the `web` section: the HTTP and HTTPS redirect chains of the domain's
 * front page, a CORS probe with a foreign Origin, and a legacy-TLS handshake. GET and a
 * bare handshake only: the scan is read-only, as interface 4.5 promises.
 */
import type { ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { createDnsClient, type DnsQuery, normalizeName } from "../../../shared/platform/net/outbound/dns-client.js";
import { CORS_PROBE_ORIGIN, type WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { fetchOnce, followRedirects, type HttpContext, probeLegacyTls } from "../../../shared/platform/net/outbound/http-client.js";
import { dnsHostResolver } from "../../../shared/platform/net/outbound/ssrf.js";

export async function retrieveWeb(domainInput: string, options: ScanOptions, now: number, query?: DnsQuery): Promise<WebEvidence> {
  const domain = normalizeName(domainInput);
  const context: HttpContext = { options, resolveHost: dnsHostResolver(query ?? createDnsClient(options.resolver, options.timeoutMs)) };
  const [http, https] = await Promise.all([
    followRedirects(new URL(`http://${domain}/`), context),
    followRedirects(new URL(`https://${domain}/`), context),
  ]);
  const answered = https.hops.filter((hop) => hop.status !== null && hop.url.startsWith("https:"));
  const final = answered.at(-1) ?? null;
  const [cors, legacyTls] = await Promise.all([
    final ? fetchOnce(new URL(final.url), context, { headers: { origin: CORS_PROBE_ORIGIN } }) : Promise.resolve(null),
    answered.length > 0 ? probeLegacyTls(new URL(`https://${domain}/`), context) : Promise.resolve(null),
  ]);
  return { domain, retrievedAt: now, http, https, cors, legacyTls };
}
