import type http from "node:http";
import net from "node:net";
import { createTCPServer, createUDPServer } from "dns2";
import type { DnsHandler } from "dns2";
import { generate } from "selfsigned";

/**
 * Servers on loopback for runs that must not leave the machine: `npm run load`'s scan
 * targets and the test fixtures (scanner sites, SIEM collectors). A CA made at start signs
 * their certificates, so a client trusts exactly it (SCAN_CA_FILE, a collector's `ca`).
 */

const DAY_MS = 86_400_000;

export interface IssuedCertificate {
  /** PEM private key. */
  key: string;
  /** PEM certificate. */
  cert: string;
}

export interface LocalCa {
  /** PEM of the CA certificate: the one issuer to trust. */
  readonly pem: string;
  /**
   * A server certificate for `names` (DNS names, or IP addresses given as such), the first
   * one its common name; valid from a day before `nowMs` for `validDays` unless `fromMs`/`toMs` say otherwise.
   */
  issue(names: readonly string[], validity?: { fromMs: number; toMs: number }): Promise<IssuedCertificate>;
}

export async function makeLocalCa(commonName: string, nowMs: number, validDays: number): Promise<LocalCa> {
  const from = new Date(nowMs - DAY_MS);
  const to = new Date(nowMs + validDays * DAY_MS);
  const ca = await generate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: from,
    notAfterDate: to,
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return {
    pem: ca.cert,
    issue: async (names, validity) => {
      const leaf = await generate([{ name: "commonName", value: names[0] }], {
        keyType: "ec",
        algorithm: "sha256",
        notBeforeDate: validity ? new Date(validity.fromMs) : from,
        notAfterDate: validity ? new Date(validity.toMs) : to,
        ca: { key: ca.private, cert: ca.cert },
        extensions: [
          { name: "basicConstraints", cA: false },
          { name: "keyUsage", digitalSignature: true, critical: true },
          { name: "extKeyUsage", serverAuth: true },
          {
            name: "subjectAltName",
            altNames: names.map((name) => (net.isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name })),
          },
        ],
      });
      return { key: leaf.private, cert: leaf.cert };
    },
  };
}

/** Listens on a free loopback port; resolves with the port. */
export function listenLoopback(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address !== null && typeof address === "object") resolve(address.port);
      else reject(new Error("server has no TCP address"));
    });
  });
}

/** Closes an HTTP(S) server, keep-alive connections included. */
export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A DNS server (dns2) answering on one loopback port over UDP and TCP alike, as resolvers expect. */
export async function startLoopbackDns(handler: DnsHandler): Promise<{ port: number; close: () => Promise<void> }> {
  // UDP takes a random port first; TCP then needs the same number, so retry on a clash.
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
    if (bound) {
      return {
        port,
        close: async () => {
          await closeUdp();
          await new Promise<void>((resolve) => tcp.close(() => resolve()));
        },
      };
    }
    await closeUdp();
  }
  throw new Error("could not bind a loopback DNS server to one UDP+TCP port");
}
