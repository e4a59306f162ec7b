import { createHash } from "node:crypto";
import { parseAddress } from "./ip.js";

/**
 * The source a per-source rate limit counts (rate_per_source_per_minute): the network
 * of the connecting address, an IPv4 address as is, an IPv6 address by its /64 (one
 * subscriber line or host is given a whole /64, so counting single IPv6 addresses would
 * let one attacker rotate through 2^64 sources). Only a digest reaches Redis: the
 * window's name never holds an address. "" when the address cannot be read.
 */
export function sourceId(remoteAddress: string): string {
  const address = parseAddress(remoteAddress);
  if (address === null) return "";
  const network = address.kind() === "ipv4" ? address.toString() : `${address.toNormalizedString().split(":").slice(0, 4).join(":")}::/64`;
  return createHash("sha256").update(network).digest("base64url").slice(0, 16);
}
