/**
 * Hand-built evidence for check tests: start from empty evidence and set one field,
 * as STYLE convention 9 asks.
 */
import {
  emptyDnsEvidence,
  emptyExchange,
  emptyWebEvidence,
  noData,
  type CertificateInfo,
  type DnsAnswer,
  type DnsEvidence,
  type DnsRecord,
  type HttpExchange,
  type RecordType,
  type TlsInfo,
  type WebEvidence,
} from "../../../shared/platform/net/outbound/evidence.js";

export const DOMAIN = "example.test";
export const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
export const DAY_MS = 86_400_000;

export function answer(name: string, type: RecordType, records: readonly DnsRecord[], overrides: Partial<DnsAnswer> = {}): DnsAnswer {
  return { ...noData(name, type), records, ...overrides };
}

export function txt(name: string, ...texts: string[]): DnsAnswer {
  return answer(
    name,
    "TXT",
    texts.map((text) => ({ type: "TXT", name, strings: [text] })),
  );
}

export function nxdomain(name: string, type: RecordType): DnsAnswer {
  return { ...noData(name, type), status: "nxdomain", rcode: 3 };
}

export function timedOut(name: string, type: RecordType): DnsAnswer {
  return { ...noData(name, type), status: "timeout", rcode: null, error: "no reply within 2000 ms" };
}

export function dnsWith(patch: Partial<DnsEvidence>): DnsEvidence {
  return { ...emptyDnsEvidence(DOMAIN, NOW), ...patch };
}

export function mxAnswer(...exchanges: string[]): DnsAnswer {
  return answer(
    DOMAIN,
    "MX",
    exchanges.map((exchange, i) => ({ type: "MX", name: DOMAIN, priority: 10 * (i + 1), exchange })),
  );
}

export function certificate(overrides: Partial<CertificateInfo> = {}): CertificateInfo {
  const from = NOW - 30 * DAY_MS;
  const to = NOW + 60 * DAY_MS;
  return {
    subject: `CN=${DOMAIN}`,
    issuer: "CN=Test CA",
    validFrom: new Date(from).toUTCString(),
    validTo: new Date(to).toUTCString(),
    validFromMs: from,
    validToMs: to,
    subjectAltNames: [`DNS:${DOMAIN}`],
    fingerprint256: "00:11",
    ...overrides,
  };
}

export function tlsInfo(overrides: Partial<TlsInfo> = {}): TlsInfo {
  return { protocol: "TLSv1.3", authorized: true, authorizationError: null, certificate: certificate(), ...overrides };
}

export function response(
  url: string,
  headers: readonly (readonly [string, string])[] = [],
  overrides: Partial<HttpExchange> = {},
): HttpExchange {
  const secure = url.startsWith("https:");
  return emptyExchange(url, { status: 200, address: "192.0.2.10", headers, tls: secure ? tlsInfo() : null, ...overrides });
}

export function webWith(patch: Partial<WebEvidence>): WebEvidence {
  return { ...emptyWebEvidence(DOMAIN, NOW), ...patch };
}

/** Empty web evidence plus one answered HTTPS page. */
export function webWithPage(headers: readonly (readonly [string, string])[], overrides: Partial<HttpExchange> = {}): WebEvidence {
  return webWith({
    https: { start: `https://${DOMAIN}/`, hops: [response(`https://${DOMAIN}/`, headers, overrides)], outcome: "complete" },
  });
}
