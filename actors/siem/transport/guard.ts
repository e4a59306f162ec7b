import { createDnsClient } from "../../scanner/retrieve/dns-client.js";
import { dnsHostResolver, type GuardedAddress, type HostResolver, resolveGuarded } from "../../scanner/retrieve/ssrf.js";

/** What every transport needs besides the destination: built once from the configuration. */
export interface PushNetwork {
  /** SCAN_ALLOW_PRIVATE: lets tests (and on-premise collectors) be reached on private addresses. */
  allowPrivate: boolean;
  resolveHost: HostResolver;
  /** SCAN_CA_FILE contents: trusted next to the system store (collectors with a private CA). */
  caPem: string | null;
  /** Per request (HTTP) or per batch (syslog): a collector that hangs costs this much. */
  timeoutMs: number;
  /** HOSTNAME of syslog lines and `host` of HEC events: the service's public host name. */
  hostname: string;
}

export function pushNetwork(options: {
  allowPrivate: boolean;
  resolver: { host: string; port: number } | null;
  caPem: string | null;
  timeoutMs: number;
  hostname: string;
}): PushNetwork {
  return {
    allowPrivate: options.allowPrivate,
    resolveHost: dnsHostResolver(createDnsClient(options.resolver, options.timeoutMs)),
    caPem: options.caPem,
    timeoutMs: options.timeoutMs,
    hostname: options.hostname,
  };
}

/**
 * The SSRF guard of the scanner, for every batch: the host is resolved, each address
 * checked (loopback, private, link-local, metadata... refused unless allowPrivate), and
 * the socket connects to that checked address (pinned), so a DNS answer that changes
 * between check and connect cannot steer the pusher into the service's own network.
 */
export async function guardedAddress(host: string, network: PushNetwork): Promise<GuardedAddress & { ok: true }> {
  const verdict = await resolveGuarded(host, network.allowPrivate, network.resolveHost);
  if (!verdict.ok) throw new Error(`SSRF guard refused ${host}: ${verdict.detail}`);
  return verdict;
}
