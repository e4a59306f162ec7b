import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createTCPServer, createUDPServer, Packet } from "dns2";
import type { DnsHandler, Resource } from "dns2";
import { generate } from "selfsigned";

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

const DAY_MS = 86_400_000;
const RCODE_NXDOMAIN = 3;

/** The load domains: `scan-1.test` … `scan-N.test`. */
export function scanDomains(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `scan-${i + 1}.test`);
}

function records(domain: string): Map<string, Resource[]> {
  const base = (name: string) => ({ name, class: Packet.CLASS.IN, ttl: 300 });
  const a = (name: string) => new Packet.Resource({ ...base(name), type: Packet.TYPE.A, address: "127.0.0.1" });
  return new Map([
    [domain, [
      a(domain),
      new Packet.Resource({ ...base(domain), type: Packet.TYPE.NS, ns: `ns1.${domain}` }),
      new Packet.Resource({ ...base(domain), type: Packet.TYPE.MX, priority: 10, exchange: `mx.${domain}` }),
      new Packet.Resource({ ...base(domain), type: Packet.TYPE.TXT, data: "v=spf1 +all" }),
      new Packet.Resource({
        ...base(domain), type: Packet.TYPE.SOA, primary: `ns1.${domain}`, admin: `hostmaster.${domain}`,
        serial: 2026112401, refresh: 3600, retry: 600, expiration: 604800, minimum: 300,
      }),
    ]],
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

/** UDP takes a random port first; TCP then needs the same number, so retry on a clash. */
async function startDns(handler: DnsHandler): Promise<{ port: number; close: () => Promise<void> }> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const udp = createUDPServer(handler);
    await udp.listen(0, "127.0.0.1");
    const port = udp.address().port;
    const tcp: net.Server = createTCPServer(handler);
    const bound = await new Promise<boolean>((resolve) => {
      tcp.once("error", () => resolve(false));
      tcp.listen(port, "127.0.0.1", () => resolve(true));
    });
    const closeUdp = () => new Promise<void>((resolve) => udp.close(() => resolve()));
    if (bound) return { port, close: async () => { await closeUdp(); await new Promise<void>((resolve) => tcp.close(() => resolve())); } };
    await closeUdp();
  }
  throw new Error("could not bind the load DNS server to one UDP+TCP port");
}

/** One page for every host, over HTTP and HTTPS alike: no HSTS, no CSP, a version banner. */
function page(request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/html", server: "Apache/2.2.3 (CentOS)", "set-cookie": "sessionid=abc123; Path=/" });
  response.end(request.method === "HEAD" ? undefined : "<!doctype html><html><head><title>load</title></head><body>load</body></html>");
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address !== null && typeof address === "object") resolve(address.port);
      else reject(new Error("server has no TCP address"));
    });
  });
}

export async function startScanTargets(domains: readonly string[], nowMs: number): Promise<ScanTargets> {
  const ca = await generate([{ name: "commonName", value: "Load CA" }], {
    keyType: "ec", algorithm: "sha256", notBeforeDate: new Date(nowMs - DAY_MS), notAfterDate: new Date(nowMs + 30 * DAY_MS),
    extensions: [{ name: "basicConstraints", cA: true, critical: true }, { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true }],
  });
  const names = domains.flatMap((d) => [d, `www.${d}`]);
  const leaf = await generate([{ name: "commonName", value: names[0] }], {
    keyType: "ec", algorithm: "sha256", notBeforeDate: new Date(nowMs - DAY_MS), notAfterDate: new Date(nowMs + 30 * DAY_MS),
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: names.map((value) => ({ type: 2 as const, value })) },
    ],
  });
  const httpServer = http.createServer(page);
  const httpsServer = https.createServer({ key: leaf.private, cert: leaf.cert }, page);
  const [dns, httpPort, httpsPort] = await Promise.all([startDns(dnsHandler(domains)), listen(httpServer), listen(httpsServer)]);
  const close = (server: http.Server) => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    resolver: `127.0.0.1:${dns.port}`, httpPort, httpsPort, caPem: ca.cert,
    stop: async () => {
      await Promise.all([dns.close(), close(httpServer), close(httpsServer)]);
    },
  };
}
