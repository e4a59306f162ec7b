import { createHash } from "node:crypto";
import ipaddr from "ipaddr.js";
import { parseAddress } from "./ip.js";

/**
 * One subscriber line or host is given a whole /64 (RFC 6177), so counting single IPv6
 * addresses would let one attacker rotate through 2^64 sources. A site whose attackers hold
 * routed /56 or /48 blocks sets RATE_SOURCE_IPV6_PREFIX shorter, at the price of counting
 * the neighbours of such a block as the same source (docs/security.md, item 1).
 */
export const DEFAULT_SOURCE_IPV6_PREFIX = 64;

/**
 * The source a per-source rate limit counts (rate_per_source_per_minute): the network
 * of the connecting address, an IPv4 address as is, an IPv6 address by its network of
 * `ipv6Prefix` bits. Only a digest reaches Redis: the window's name never holds an address.
 * "" when the address cannot be read.
 */
export function sourceId(remoteAddress: string, ipv6Prefix = DEFAULT_SOURCE_IPV6_PREFIX): string {
  const address = parseAddress(remoteAddress);
  if (address === null) return "";
  const network = address.kind() === "ipv4" ? address.toString() : ipv6Network(address as ipaddr.IPv6, ipv6Prefix);
  return createHash("sha256").update(network).digest("base64url").slice(0, 16);
}

/** `2001:db8:1:2:0:0:0:0/64`: the address with every bit past the prefix cleared, and the prefix length. */
function ipv6Network(address: ipaddr.IPv6, prefix: number): string {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const kept = Math.min(8, Math.max(0, prefix - i * 8));
    bytes[i] &= (0xff00 >> kept) & 0xff;
  }
  return `${(ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toNormalizedString()}/${prefix}`;
}
