import type { OutboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { createDnsClient } from "../../../shared/platform/net/outbound/dns-client.js";
import { dnsHostResolver, type GuardedAddress, type HostResolver, resolveGuarded } from "../../../shared/platform/net/outbound/ssrf.js";

/** What every transport needs besides the destination: built once from the configuration. */
export interface PushNetwork {
  /** The `siem` policy: private space only inside OUTBOUND_ALLOW_CIDRS (on-premise collectors, tests). */
  outbound: OutboundPolicy;
  resolveHost: HostResolver;
  /** SCAN_CA_FILE contents: trusted next to the system store (collectors with a private CA). */
  caPem: string | null;
  /** Per request (HTTP) or per batch (syslog): a collector that hangs costs this much. */
  timeoutMs: number;
  /** HOSTNAME of syslog lines and `host` of HEC events: the service's public host name. */
  hostname: string;
}

export function pushNetwork(options: {
  outbound: OutboundPolicy;
  resolver: { host: string; port: number } | null;
  caPem: string | null;
  timeoutMs: number;
  hostname: string;
}): PushNetwork {
  return {
    outbound: options.outbound,
    resolveHost: dnsHostResolver(createDnsClient(options.resolver, options.timeoutMs)),
    caPem: options.caPem,
    timeoutMs: options.timeoutMs,
    hostname: options.hostname,
  };
}

/**
 * The SSRF guard of the scanner, for every batch: the host is resolved, each address
 * checked (loopback, private, link-local... refused outside OUTBOUND_ALLOW_CIDRS, metadata always), and
 * the socket connects to that checked address (pinned), so a DNS answer that changes
 * between check and connect cannot steer the pusher into the service's own network.
 */
export async function guardedAddress(host: string, network: PushNetwork): Promise<GuardedAddress & { ok: true }> {
  const verdict = await resolveGuarded(host, network.outbound, network.resolveHost);
  if (!verdict.ok) throw new Error(`SSRF guard refused ${host}: ${verdict.detail}`);
  return verdict;
}
