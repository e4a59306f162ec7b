import { checkAddress, outboundPolicy, type OutboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { createDnsClient } from "../../../shared/platform/net/outbound/dns-client.js";
import {
  dnsHostResolver,
  type GuardedAddress,
  type HostResolver,
  resolveGuarded,
  unreachableHost,
} from "../../../shared/platform/net/outbound/ssrf.js";

/**
 * A failure a retry may fix; `status` when the collector answered. The message is what the
 * organization reads (the destination's `last_error`, the "send test event" reply);
 * `logDetail`, when set, is the fuller text it must not read (a collector's words from inside
 * the service's network, why the guard refused a name), for the log only.
 */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  readonly status?: number;
  readonly logDetail?: string;
  constructor(message: string, options: { status?: number; logDetail?: string } = {}) {
    super(message);
    this.status = options.status;
    this.logDetail = options.logDetail;
  }
}

/**
 * A socket error as the organization may read it: Node's message names the address connected
 * to (`connect ECONNREFUSED 10.20.30.5:9200`), which for a collector reached only through an
 * OUTBOUND_ALLOW_CIDRS block is the inside of the network. Then only the error's code is
 * said, and the message goes to the log.
 */
export function connectionError(error: Error, isPublic: boolean): DeliveryError {
  if (error instanceof DeliveryError) return error;
  if (isPublic) return new DeliveryError(error.message);
  const code = (error as NodeJS.ErrnoException).code;
  return new DeliveryError(`connection failed${typeof code === "string" ? ` (${code})` : ""}`, { logDetail: error.message });
}

/** What every transport needs besides the destination: built once from the configuration. */
export interface PushNetwork {
  /** The `siem` policy: private space only inside OUTBOUND_ALLOW_CIDRS (on-premise collectors, tests). */
  outbound: OutboundPolicy;
  resolveHost: HostResolver;
  /**
   * Whether an address is reachable under the default policy, no OUTBOUND_ALLOW_CIDRS block
   * needed: only a collector there has its answer quoted to the organization. Tests whose
   * collectors listen on loopback widen it to see a quoted answer.
   */
  isPublic: (ip: string) => boolean;
  /** SCAN_CA_FILE contents: trusted next to the system store (collectors with a private CA). */
  caPem: string | null;
  /** Per request (HTTP) or per batch (syslog): a collector that hangs costs this much. */
  timeoutMs: number;
  /** HOSTNAME of syslog lines and `host` of HEC events: the service's public host name. */
  hostname: string;
}

const PUBLIC_ONLY = outboundPolicy("siem", "none");

/** Production's `isPublic`: what the `siem` policy reaches with OUTBOUND_ALLOW_CIDRS unset. */
export function publicUnderDefault(ip: string): boolean {
  return checkAddress(ip, PUBLIC_ONLY).ok;
}

export function pushNetwork(options: {
  outbound: OutboundPolicy;
  resolver: { host: string; port: number } | null;
  caPem: string | null;
  timeoutMs: number;
  hostname: string;
  isPublic?: (ip: string) => boolean;
}): PushNetwork {
  return {
    outbound: options.outbound,
    resolveHost: dnsHostResolver(createDnsClient(options.resolver, options.timeoutMs)),
    isPublic: options.isPublic ?? publicUnderDefault,
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
 * `isPublic` says whether the collector's answer may be quoted to the organization.
 * A refusal reads the same whether the name does not resolve or resolves inside (unreachableHost).
 */
export async function guardedAddress(host: string, network: PushNetwork): Promise<GuardedAddress & { ok: true; isPublic: boolean }> {
  const verdict = await resolveGuarded(host, network.outbound, network.resolveHost);
  if (!verdict.ok) throw new DeliveryError(unreachableHost(host), { logDetail: `SSRF guard refused ${host}: ${verdict.detail}` });
  return { ...verdict, isPublic: network.isPublic(verdict.address) };
}
