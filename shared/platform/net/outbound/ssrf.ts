/**
 * The SSRF guard, for every outbound request: scans, status probes, SIEM pushes and
 * webhooks. Scans, SIEM destinations and webhooks go to names a customer controls, so a
 * name (or a redirect) must not steer them at the service's own network: loopback, private
 * ranges, link-local and the cloud metadata address, CGNAT, and their IPv4-in-IPv6 forms.
 * What each purpose may reach is its policy (shared/platform/net/address-policy.ts).
 *
 * The name is resolved once, the address checked against the policy (the admin API applies
 * the same check to literal addresses), and the connection made to that very
 * address through a pinned `lookup` (SNI and Host keep the name). Resolving again at
 * connect time would let a short-TTL record answer "public" to the check and "private"
 * to the socket (DNS rebinding).
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import net from "node:net";
import { type AddressPolicy, checkAddress, type OutboundPolicy } from "../address-policy.js";
import { createDnsClient, type DnsQuery, type DnsServer } from "./dns-client.js";

export type GuardedAddress =
  | { readonly ok: true; readonly address: string; readonly family: 4 | 6 }
  | { readonly ok: false; readonly reason: string; readonly detail: string };

export type HostResolver = (host: string) => Promise<string[]>;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** Addresses of a name through the configured resolver: A first, so IPv4 is preferred. */
export function dnsHostResolver(query: DnsQuery): HostResolver {
  return async (host) => {
    if (net.isIP(host)) return [host];
    const [a, aaaa] = await Promise.all([query(host, "A"), query(host, "AAAA")]);
    const addresses = [...a.records, ...aaaa.records].flatMap((r) => (r.type === "A" || r.type === "AAAA" ? [r.address] : []));
    if (addresses.length === 0) {
      const reason = a.error ?? (a.status === "noerror" ? "no address records" : a.status);
      throw new Error(`cannot resolve ${host}: ${reason}`);
    }
    return addresses;
  };
}

/**
 * Resolves and checks. The first acceptable address is chosen; refused ones are never
 * connected to, so a name mixing public and private records cannot reach the private one.
 */
export async function resolveGuarded(
  host: string,
  policy: OutboundPolicy,
  resolve: HostResolver,
  check: AddressPolicy = checkAddress,
): Promise<GuardedAddress> {
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    return { ok: false, reason: "unresolvable", detail: error instanceof Error ? error.message : String(error) };
  }
  let firstRefusal: { reason: string; address: string } | null = null;
  for (const address of addresses) {
    const verdict = check(address, policy);
    if (verdict.ok) return { ok: true, address, family: net.isIPv6(address) ? 6 : 4 };
    firstRefusal ??= { reason: verdict.reason, address };
  }
  const refusal = firstRefusal ?? { reason: "unresolvable", address: "none" };
  // A refused address is the service's network, not the customer's business: never echo it
  // into scan evidence or a refusal message, only the kind of address.
  return { ok: false, reason: refusal.reason, detail: `${host} resolves to a non-public address (${refusal.reason})` };
}

/**
 * What the guard's refusal says to the customer who named `host` as a SIEM destination or a
 * webhook: one sentence whether the name does not resolve or resolves only to refused
 * addresses. The verdict's `detail` tells those apart, and which names resolve inside the
 * service's network is not the customer's to learn (their `last_error`, a test event's reply),
 * so `detail` goes to the log. Scans keep `detail` as evidence (docs/security.md, item 8).
 */
export function unreachableHost(host: string): string {
  return `${host} does not resolve to a public address this service may reach`;
}

/** A `lookup` for http/https/tls that answers with the pre-checked address, whatever the name. */
export function pinnedLookup(address: string, family: 4 | 6): Lookup {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * A drop-in `lookup` that resolves through the configured DNS server and refuses what
 * the policy refuses. The address it returns is the one the socket connects to.
 */
export function guardedLookup(policy: OutboundPolicy, resolver: DnsServer | null, timeoutMs = 5_000): Lookup {
  const resolve = dnsHostResolver(createDnsClient(resolver, timeoutMs));
  return (hostname, options, callback) => {
    resolveGuarded(hostname, policy, resolve).then(
      (verdict) => {
        if (!verdict.ok) {
          const error: NodeJS.ErrnoException = Object.assign(new Error(`SSRF guard: ${verdict.detail}`), { code: "EACCES" });
          callback(error, "");
          return;
        }
        pinnedLookup(verdict.address, verdict.family)(hostname, options, callback);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ""),
    );
  };
}
