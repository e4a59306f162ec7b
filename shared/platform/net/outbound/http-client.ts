/**
 * Non-destructive HTTP(S) retrieval behind the SSRF guard: GET and HEAD only, one
 * time-out per request, bodies cut at 1 MiB, every redirect hop re-checked. TLS is
 * accepted whatever the certificate says (`rejectUnauthorized: false`) so that a bad
 * certificate is evidence rather than a missing response; whether it validated is kept.
 */
import http from "node:http";
import https from "node:https";
import type { IncomingMessage } from "node:http";
import net from "node:net";
import tls from "node:tls";
import type { ScanOptions } from "./options.js";
import type { CertificateInfo, HttpExchange, RedirectChain, TlsInfo } from "./evidence.js";
import { emptyExchange } from "./evidence.js";
import type { AddressPolicy } from "../address-policy.js";
import { type HostResolver, pinnedLookup, resolveGuarded } from "./ssrf.js";
import { trustedCas } from "./trust.js";

export const BODY_LIMIT = 1024 * 1024;
export const MAX_REDIRECTS = 10;
/** A whole chain may take this many single-request time-outs: ten slow hops must not hold a scan for a minute. */
export const CHAIN_BUDGET_TIMEOUTS = 3;
const USER_AGENT = "Mozilla/5.0 (compatible; access-gateway-scanner/1.0)";
/** Lets the handshake reach servers that only speak TLS 1.0/1.1, so the version check can see them. */
const LEGACY_CIPHERS = "DEFAULT:@SECLEVEL=0";

export interface HttpContext {
  readonly options: ScanOptions;
  readonly resolveHost: HostResolver;
  readonly addressPolicy?: AddressPolicy;
}

export interface RequestInit {
  readonly method?: "GET" | "HEAD";
  readonly headers?: Readonly<Record<string, string>>;
  /** Shorter than `options.timeoutMs` when a redirect chain is running out of budget. */
  readonly timeoutMs?: number;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** URLs name the default port; the scan connects to the configured one (tests use local servers). */
function portOf(url: URL, options: ScanOptions): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? options.httpsPort : options.httpPort;
}

function webPorts(options: ScanOptions): ReadonlySet<number> {
  return new Set([80, 443, options.httpPort, options.httpsPort]);
}

function trustStore(options: ScanOptions): string[] | undefined {
  return trustedCas(options.caPem);
}

function certificateOf(socket: tls.TLSSocket): CertificateInfo | null {
  const cert = socket.getPeerX509Certificate();
  if (!cert) return null;
  return {
    subject: cert.subject.replace(/\n/g, ", "),
    issuer: cert.issuer.replace(/\n/g, ", "),
    validFrom: cert.validFrom,
    validTo: cert.validTo,
    validFromMs: Date.parse(cert.validFrom),
    validToMs: Date.parse(cert.validTo),
    subjectAltNames: (cert.subjectAltName ?? "").split(/,\s*/).filter((s) => s !== ""),
    fingerprint256: cert.fingerprint256,
  };
}

function tlsInfoOf(socket: tls.TLSSocket): TlsInfo {
  const error = socket.authorizationError;
  return {
    protocol: socket.getProtocol(),
    authorized: socket.authorized,
    authorizationError: error ? String(error) : null,
    certificate: certificateOf(socket),
  };
}

function headerPairs(raw: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i].toLowerCase(), raw[i + 1]]);
  return pairs;
}

/** One request, no redirect following. Never rejects: failures are recorded in the exchange. */
export async function fetchOnce(url: URL, context: HttpContext, init: RequestInit = {}): Promise<HttpExchange> {
  const method = init.method ?? "GET";
  const base = emptyExchange(url.href, { method });
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ...base, error: `unsupported scheme ${url.protocol}` };
  const host = hostOf(url);
  const { options } = context;
  const verdict = await resolveGuarded(host, options.outbound, context.resolveHost, context.addressPolicy);
  if (!verdict.ok) {
    const refused = verdict.reason === "unresolvable" ? null : verdict.reason;
    return { ...base, error: refused ? `refused by the SSRF guard: ${verdict.detail}` : verdict.detail, refused };
  }
  const secure = url.protocol === "https:";
  const requestOptions: https.RequestOptions = {
    host,
    port: portOf(url, options),
    path: `${url.pathname}${url.search}`,
    method,
    agent: false,
    lookup: pinnedLookup(verdict.address, verdict.family),
    headers: { host: url.host, "user-agent": USER_AGENT, accept: "text/html,*/*;q=0.8", ...init.headers },
    ...(secure
      ? {
          servername: net.isIP(host) ? undefined : host,
          ca: trustStore(options),
          rejectUnauthorized: false,
          minVersion: "TLSv1" as const,
          ciphers: LEGACY_CIPHERS,
        }
      : {}),
  };
  const withAddress = { ...base, address: verdict.address };
  const timeoutMs = Math.min(init.timeoutMs ?? options.timeoutMs, options.timeoutMs);
  return new Promise<HttpExchange>((resolve) => {
    let settled = false;
    const done = (exchange: HttpExchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(exchange);
    };
    const onResponse = (response: IncomingMessage) => {
      const socket = response.socket;
      const tlsInfo = socket instanceof tls.TLSSocket ? tlsInfoOf(socket) : null;
      const head = { ...withAddress, status: response.statusCode ?? null, headers: headerPairs(response.rawHeaders), tls: tlsInfo };
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        const room = BODY_LIMIT - size;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        // Stop reading at the limit: the rest of a large page says nothing the checks need.
        if (size >= BODY_LIMIT) done({ ...head, body: Buffer.concat(chunks).toString("utf8"), bodyTruncated: true });
      });
      response.on("end", () => done({ ...head, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", (error) => done({ ...head, body: Buffer.concat(chunks).toString("utf8"), error: error.message }));
    };
    const request = (secure ? https : http).request(requestOptions, onResponse);
    const timer = setTimeout(() => done({ ...withAddress, error: `no response within ${timeoutMs} ms` }), timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) => done({ ...withAddress, error: error.code ?? error.message }));
    request.end();
  });
}

function locationOf(exchange: HttpExchange): string | null {
  if (exchange.status === null || exchange.status < 300 || exchange.status >= 400) return null;
  return exchange.headers.find(([name]) => name === "location")?.[1] ?? null;
}

/** Follows up to 10 redirects; a URL seen twice is a loop and is not fetched again. */
export async function followRedirects(start: URL, context: HttpContext, init: RequestInit = {}): Promise<RedirectChain> {
  const hops: HttpExchange[] = [];
  const seen = new Set<string>();
  const deadline = performance.now() + CHAIN_BUDGET_TIMEOUTS * context.options.timeoutMs;
  // The port the chain started on was chosen by whoever aimed the request (the scan ports, an
  // operator's probe URL): a redirect back to it reaches nothing new.
  const ports = new Set(webPorts(context.options));
  if (start.port !== "") ports.add(Number(start.port));
  let url = start;
  for (;;) {
    if (seen.has(url.href)) return { start: start.href, hops, outcome: "loop" };
    if (hops.length > MAX_REDIRECTS) return { start: start.href, hops, outcome: "too-many-redirects" };
    const remaining = Math.floor(deadline - performance.now());
    if (remaining <= 0) {
      hops.push(emptyExchange(url.href, { error: "redirect chain exceeded its time budget" }));
      return { start: start.href, hops, outcome: "error" };
    }
    seen.add(url.href);
    const exchange = await fetchOnce(url, context, { ...init, timeoutMs: remaining });
    hops.push(exchange);
    if (exchange.status === null) return { start: start.href, hops, outcome: "error" };
    const location = locationOf(exchange);
    if (location === null) return { start: start.href, hops, outcome: "complete" };
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return { start: start.href, hops, outcome: "error" };
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") return { start: start.href, hops, outcome: "complete" };
    // A redirect may name any port: only web ports are followed (80, 443, the configured
    // scan ports or the chain's own), so a customer's name cannot aim the scanner at another service.
    if (next.port !== "" && !ports.has(Number(next.port))) {
      hops.push(emptyExchange(next.href, { error: `redirect to port ${next.port} not followed (web ports only)` }));
      return { start: start.href, hops, outcome: "error" };
    }
    next.hash = "";
    url = next;
  }
}

/**
 * Whether the server still completes a handshake capped at TLS 1.1. One handshake, no
 * request. Null when the address is refused or the probe timed out (unknown, not "no").
 */
export async function probeLegacyTls(url: URL, context: HttpContext): Promise<boolean | null> {
  const host = hostOf(url);
  const verdict = await resolveGuarded(host, context.options.outbound, context.resolveHost, context.addressPolicy);
  if (!verdict.ok) return null;
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port: portOf(url, context.options),
      servername: net.isIP(host) ? undefined : host,
      lookup: pinnedLookup(verdict.address, verdict.family),
      minVersion: "TLSv1",
      maxVersion: "TLSv1.1",
      ciphers: LEGACY_CIPHERS,
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => finish(null), context.options.timeoutMs);
    const finish = (result: boolean | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    socket.once("secureConnect", () => finish(true));
    socket.once("error", () => finish(false));
  });
}
