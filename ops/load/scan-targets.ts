import http from "node:http";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Packet } from "dns2";
import type { DnsHandler, Resource } from "dns2";
import { closeServer, listenLoopback, makeLocalCa, startLoopbackDns } from "../local-servers.js";

/**
 * What `npm run load`'s scans reach, all on loopback so a run never leaves the machine: a
 * DNS server (dns2, UDP and TCP on one port) answering for the load domains, and an HTTP
 * and an HTTPS server whose certificate a CA made at start signs. The scanner actor gets
 * them as DNS_RESOLVER, SCAN_HTTP_PORT, SCAN_HTTPS_PORT and SCAN_CA_FILE with
 * SCAN_ALLOW_PRIVATE=1. Every domain is set up half wrong (SPF `+all`, no DMARC, one mail
 * host, no security headers, a server banner), so each scan reports findings to assign.
 */
export interface ScanTargets {
  /** host:port for DNS_RESOLVER. */
  readonly resolver: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** PEM of the CA that signed the HTTPS certificate (SCAN_CA_FILE). */
  readonly caPem: string;
  stop(): Promise<void>;
}

const RCODE_NXDOMAIN = 3;

/** The load domains: `scan-1.test` … `scan-N.test`. */
export function scanDomains(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `scan-${i + 1}.test`);
}

function records(domain: string): Map<string, Resource[]> {
  const base = (name: string) => ({ name, class: Packet.CLASS.IN, ttl: 300 });
  const a = (name: string) => new Packet.Resource({ ...base(name), type: Packet.TYPE.A, address: "127.0.0.1" });
  return new Map([
    [
      domain,
      [
        a(domain),
        new Packet.Resource({ ...base(domain), type: Packet.TYPE.NS, ns: `ns1.${domain}` }),
        new Packet.Resource({ ...base(domain), type: Packet.TYPE.MX, priority: 10, exchange: `mx.${domain}` }),
        new Packet.Resource({ ...base(domain), type: Packet.TYPE.TXT, data: "v=spf1 +all" }),
        new Packet.Resource({
          ...base(domain),
          type: Packet.TYPE.SOA,
          primary: `ns1.${domain}`,
          admin: `hostmaster.${domain}`,
          serial: 2026112401,
          refresh: 3600,
          retry: 600,
          expiration: 604800,
          minimum: 300,
        }),
      ],
    ],
    [`www.${domain}`, [a(`www.${domain}`)]],
    [`ns1.${domain}`, [a(`ns1.${domain}`)]],
    [`mx.${domain}`, [a(`mx.${domain}`)]],
  ]);
}

function dnsHandler(domains: readonly string[]): DnsHandler {
  const zone = new Map<string, Resource[]>();
  for (const domain of domains) for (const [name, list] of records(domain)) zone.set(name, list);
  return (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const question = request.questions[0];
    const list = zone.get((question?.name ?? "").toLowerCase());
    if (!list) response.header.rcode = RCODE_NXDOMAIN;
    else response.answers.push(...list.filter((r) => r.type === question?.type));
    response.header.ra = 1;
    send(response).catch(() => {});
  };
}

/** One page for every host, over HTTP and HTTPS alike: no HSTS, no CSP, a version banner. */
function page(request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/html", server: "Apache/2.2.3 (CentOS)", "set-cookie": "sessionid=abc123; Path=/" });
  response.end(request.method === "HEAD" ? undefined : "<!doctype html><html><head><title>load</title></head><body>load</body></html>");
}

export async function startScanTargets(domains: readonly string[], nowMs: number): Promise<ScanTargets> {
  const ca = await makeLocalCa("Load CA", nowMs, 30);
  const leaf = await ca.issue(domains.flatMap((d) => [d, `www.${d}`]));
  const httpServer = http.createServer(page);
  const httpsServer = https.createServer(leaf, page);
  const [dns, httpPort, httpsPort] = await Promise.all([
    startLoopbackDns(dnsHandler(domains)),
    listenLoopback(httpServer),
    listenLoopback(httpsServer),
  ]);
  return {
    resolver: `127.0.0.1:${dns.port}`,
    httpPort,
    httpsPort,
    caPem: ca.pem,
    stop: async () => {
      await Promise.all([dns.close(), closeServer(httpServer), closeServer(httpsServer)]);
    },
  };
}
