/**
 * What retrieval hands to the checks. Everything a check may look at is in here, as
 * plain data (no sockets, no promises), so checks are pure and a test can build the
 * evidence by hand. A failed query or request is recorded, never thrown.
 */

export type RecordType = "A" | "AAAA" | "MX" | "TXT" | "CNAME" | "NS" | "CAA" | "SOA" | "DNSKEY";

/**
 * What scan evidence shows in place of an address the scan's address policy refuses
 * (loopback, private, metadata, ...): a name the customer controls may point at the
 * service's own network, and the evidence must not tell the customer what it resolves to.
 */
export const NON_PUBLIC_ADDRESS = "(non-public address)";

export type DnsRecord =
  /** `address` is NON_PUBLIC_ADDRESS in scan evidence when the scan policy refuses the address. */
  | { readonly type: "A" | "AAAA"; readonly name: string; readonly address: string }
  | { readonly type: "MX"; readonly name: string; readonly priority: number; readonly exchange: string }
  /** TXT character-strings as sent; consumers join them (RFC 7208 3.3). */
  | { readonly type: "TXT"; readonly name: string; readonly strings: readonly string[] }
  | { readonly type: "CNAME"; readonly name: string; readonly target: string }
  | { readonly type: "NS"; readonly name: string; readonly host: string }
  | { readonly type: "CAA"; readonly name: string; readonly flags: number; readonly tag: string; readonly value: string }
  | { readonly type: "SOA"; readonly name: string; readonly primary: string; readonly serial: number }
  | { readonly type: "DNSKEY"; readonly name: string; readonly flags: number; readonly algorithm: number };

/**
 * `noerror` with no records is NODATA. `timeout` and `error` mean no answer at all
 * (network, malformed reply); `servfail` is an answer and matters for DNSSEC.
 */
export type DnsStatus = "noerror" | "nxdomain" | "servfail" | "refused" | "rcode" | "timeout" | "error";

export interface DnsAnswer {
  readonly name: string;
  readonly type: RecordType;
  readonly status: DnsStatus;
  readonly rcode: number | null;
  /** AD flag of the reply: the resolver validated the answer with DNSSEC. */
  readonly authenticated: boolean;
  /** Records of the asked type (after any alias chain the resolver followed). */
  readonly records: readonly DnsRecord[];
  /** CNAME records the resolver returned on the way, in order. */
  readonly aliases: readonly string[];
  /**
   * Owner of the SOA record in the authority section, or null. A negative answer
   * (NODATA, NXDOMAIN) carries the SOA of the zone the name falls in (RFC 2308 3): it
   * names the zone cut without walking.
   */
  readonly authoritySoa: string | null;
  readonly error: string | null;
}

/** An answer asked with the DO bit and, only when it was SERVFAIL, the same query with CD set. */
export interface CheckedAnswer {
  readonly answer: DnsAnswer;
  /** RFC 4035 3.2.2: with CD the resolver skips validation, which tells bogus from broken. */
  readonly unchecked: DnsAnswer | null;
}

export interface DkimLookup {
  readonly selector: string;
  readonly answer: DnsAnswer;
}

export interface MxHostLookup {
  readonly exchange: string;
  readonly a: DnsAnswer;
  readonly aaaa: DnsAnswer;
}

export interface CnameLookup {
  readonly name: string;
  readonly cname: DnsAnswer;
  /** A query of the CNAME target, null when the name is not an alias. */
  readonly target: DnsAnswer | null;
}

export interface DnsEvidence {
  readonly domain: string;
  /**
   * The DNS zone the domain belongs to: the owner of the SOA the resolver returns for the
   * domain, walking up as resolvers do (zone-cut.ts). NS and DNSSEC are judged here.
   */
  readonly zone: string;
  /** How `zone` was found: `soa` by DNS, `public-suffix` when no answer named a zone. */
  readonly zoneSource: "soa" | "public-suffix";
  /** Registrable domain by the public suffix list: DMARC's organizational domain, CAA's climb. */
  readonly organizationalDomain: string;
  /** Milliseconds since the epoch, the `now` the scan was started with. */
  readonly retrievedAt: number;
  readonly a: DnsAnswer;
  readonly aaaa: DnsAnswer;
  readonly ns: DnsAnswer;
  readonly mx: DnsAnswer;
  readonly mxHosts: readonly MxHostLookup[];
  readonly txt: DnsAnswer;
  /**
   * Every query the SPF evaluation needed, keyed `txt:<name>`, `a:<name>`, `mx:<name>`
   * (see records/spf.ts `spfKey`). The apex record is `txt:<domain>`.
   */
  readonly spf: Readonly<Record<string, DnsAnswer>>;
  readonly dmarc: DnsAnswer;
  /** `_dmarc.<organizational domain>` when the domain is below it (RFC 7489 6.6.3 fallback), else null. */
  readonly dmarcZone: DnsAnswer | null;
  readonly dkim: readonly DkimLookup[];
  readonly mtaStsTxt: DnsAnswer;
  /** The policy file, fetched only when an `_mta-sts` record exists. */
  readonly mtaStsPolicy: HttpExchange | null;
  readonly tlsRpt: DnsAnswer;
  /** CAA from the domain up to the zone, nearest first (RFC 8659 tree climbing). */
  readonly caa: readonly DnsAnswer[];
  readonly cnames: readonly CnameLookup[];
  readonly dnssec: {
    /**
     * The domain's own answers, asked with DO: SOA first, then A, AAAA, MX, TXT. The AD
     * flag of the SOA answer (data or signed denial) says the domain validated; a SERVFAIL
     * on any of them that resolves with CD says its signatures are bogus.
     */
    readonly answers: readonly CheckedAnswer[];
    /** DNSKEY of the zone, asked with DO (and CD after a SERVFAIL). */
    readonly dnskey: CheckedAnswer;
  };
}

export interface CertificateInfo {
  readonly subject: string;
  readonly issuer: string;
  readonly validFrom: string;
  readonly validTo: string;
  readonly validFromMs: number;
  readonly validToMs: number;
  readonly subjectAltNames: readonly string[];
  readonly fingerprint256: string;
}

export interface TlsInfo {
  /** Negotiated protocol, e.g. `TLSv1.3`. */
  readonly protocol: string | null;
  /** Chain and host name validated against the system store plus `caPem`. */
  readonly authorized: boolean;
  readonly authorizationError: string | null;
  readonly certificate: CertificateInfo | null;
}

export interface HttpExchange {
  readonly method: "GET" | "HEAD";
  /** The logical URL (default port), as a browser would show it. */
  readonly url: string;
  /** The address connected to, after the SSRF guard accepted it. */
  readonly address: string | null;
  readonly status: number | null;
  /** Raw header pairs, names lower-cased, repeated headers (Set-Cookie) kept apart. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly bodyTruncated: boolean;
  readonly tls: TlsInfo | null;
  /** Why there is no response: time-out, connection error, SSRF refusal. */
  readonly error: string | null;
  /** Set when the SSRF guard refused the address: the range it fell in. */
  readonly refused: string | null;
}

export type ChainOutcome = "complete" | "loop" | "too-many-redirects" | "error" | "not-attempted";

export interface RedirectChain {
  readonly start: string;
  readonly hops: readonly HttpExchange[];
  readonly outcome: ChainOutcome;
}

export interface WebEvidence {
  readonly domain: string;
  readonly retrievedAt: number;
  readonly http: RedirectChain;
  readonly https: RedirectChain;
  /** GET of the final HTTPS URL with `Origin: https://evil.example`. */
  readonly cors: HttpExchange | null;
  /** Whether a handshake capped at TLS 1.1 succeeded; null when not probed. */
  readonly legacyTls: boolean | null;
}

export const CORS_PROBE_ORIGIN = "https://evil.example";

/** A NODATA answer: the starting point of hand-built evidence in tests. */
export function noData(name: string, type: RecordType): DnsAnswer {
  return { name, type, status: "noerror", rcode: 0, authenticated: false, records: [], aliases: [], authoritySoa: null, error: null };
}

export function emptyDnsEvidence(domain: string, retrievedAt = 0, zone = domain): DnsEvidence {
  return {
    domain,
    zone,
    zoneSource: "soa",
    organizationalDomain: zone,
    retrievedAt,
    a: noData(domain, "A"),
    aaaa: noData(domain, "AAAA"),
    ns: noData(zone, "NS"),
    mx: noData(domain, "MX"),
    mxHosts: [],
    txt: noData(domain, "TXT"),
    spf: { [`txt:${domain}`]: noData(domain, "TXT") },
    dmarc: noData(`_dmarc.${domain}`, "TXT"),
    dmarcZone: null,
    dkim: [],
    mtaStsTxt: noData(`_mta-sts.${domain}`, "TXT"),
    mtaStsPolicy: null,
    tlsRpt: noData(`_smtp._tls.${domain}`, "TXT"),
    caa: [noData(domain, "CAA")],
    cnames: [],
    dnssec: { answers: [{ answer: noData(domain, "SOA"), unchecked: null }], dnskey: { answer: noData(zone, "DNSKEY"), unchecked: null } },
  };
}

export function emptyExchange(url: string, overrides: Partial<HttpExchange> = {}): HttpExchange {
  return {
    method: "GET",
    url,
    address: null,
    status: null,
    headers: [],
    body: "",
    bodyTruncated: false,
    tls: null,
    error: null,
    refused: null,
    ...overrides,
  };
}

export function emptyWebEvidence(domain: string, retrievedAt = 0): WebEvidence {
  return {
    domain,
    retrievedAt,
    http: { start: `http://${domain}/`, hops: [], outcome: "not-attempted" },
    https: { start: `https://${domain}/`, hops: [], outcome: "not-attempted" },
    cors: null,
    legacyTls: null,
  };
}
