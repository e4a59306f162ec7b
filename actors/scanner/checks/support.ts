/** Small readers shared by the checks: record text for evidence, which response to judge. */
import { parseSetCookie, type ParsedCookie } from "../records/cookie.js";
import { headerValues } from "../records/headers.js";
import { joinTxt } from "../records/tags.js";
import type { DnsAnswer, DnsRecord, HttpExchange, WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";

export function formatRecord(record: DnsRecord): string {
  const head = `${record.name}. ${record.type}`;
  switch (record.type) {
    case "A":
    case "AAAA":
      return `${head} ${record.address}`;
    case "MX":
      return `${head} ${record.priority} ${record.exchange}.`;
    case "TXT":
      return `${head} ${record.strings.map((s) => JSON.stringify(s)).join(" ")}`;
    case "CNAME":
      return `${head} ${record.target}.`;
    case "NS":
      return `${head} ${record.host}.`;
    case "CAA":
      return `${head} ${record.flags} ${record.tag} ${JSON.stringify(record.value)}`;
    case "SOA":
      return `${head} ${record.primary}. (serial ${record.serial})`;
    case "DNSKEY":
      return `${head} flags ${record.flags} algorithm ${record.algorithm}`;
  }
}

/** What a query returned, as a reader of `dig` output would expect it. */
export function formatAnswer(answer: DnsAnswer): string {
  if (answer.records.length > 0) return answer.records.map(formatRecord).join("\n");
  return `${answer.name}. ${answer.type}: ${describeStatus(answer)}`;
}

export function describeStatus(answer: DnsAnswer): string {
  if (answer.error) return `${answer.status} (${answer.error})`;
  if (answer.status === "noerror") return "no records";
  return answer.status.toUpperCase();
}

/** No usable answer: the resolver failed or timed out. NXDOMAIN and NODATA are answers. */
export function lookupFailed(answer: DnsAnswer): boolean {
  return answer.status !== "noerror" && answer.status !== "nxdomain";
}

export function txtTexts(answer: DnsAnswer): string[] {
  return answer.records.flatMap((r) => (r.type === "TXT" ? [joinTxt(r.strings)] : []));
}

export function txtEvidence(name: string, texts: readonly string[]): string {
  return texts.map((t) => `${name}. TXT ${JSON.stringify(t)}`).join("\n");
}

/** Whether the domain declares a null MX (RFC 7505): it receives no mail at all. */
export function hasNullMx(answer: DnsAnswer): boolean {
  const mx = answer.records.filter((r) => r.type === "MX");
  return mx.length === 1 && mx[0].type === "MX" && mx[0].exchange === "";
}

export function answered(exchange: HttpExchange): boolean {
  return exchange.status !== null;
}

/** The first HTTPS response of the domain itself: where HSTS and the certificate are judged. */
export function firstHttps(web: WebEvidence): HttpExchange | null {
  return web.https.hops[0] && answered(web.https.hops[0]) ? web.https.hops[0] : null;
}

/**
 * The page the headers are judged on: the last answered HTTPS response, or the last
 * HTTP one when HTTPS gave nothing (a site without TLS still sends headers).
 */
export function primaryResponse(web: WebEvidence): HttpExchange | null {
  const https = web.https.hops.filter(answered).at(-1);
  if (https) return https;
  return web.http.hops.filter(answered).at(-1) ?? null;
}

export interface SeenCookie {
  readonly cookie: ParsedCookie;
  readonly url: string;
}

/**
 * Every cookie set along both chains, with the URL that set it. The HTTP chain usually
 * ends on the same HTTPS page as the HTTPS chain; that page's cookies count once.
 */
export function allCookies(web: WebEvidence): SeenCookie[] {
  const seen = new Set<string>();
  return [...web.http.hops, ...web.https.hops].flatMap((hop) =>
    headerValues(hop, "set-cookie").flatMap((line) => {
      const key = `${hop.url}\n${line}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ cookie: parseSetCookie(line), url: hop.url }];
    }),
  );
}

export function cookieEvidence(cookies: readonly SeenCookie[]): string {
  return cookies.map((c) => `set-cookie: ${c.cookie.line}`).join("\n");
}

export const NO_RESPONSE_DETAIL = "Neither https:// nor http:// answered, so there are no headers to judge.";
