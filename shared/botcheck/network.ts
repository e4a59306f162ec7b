import { hash } from "node:crypto";
import { memoize } from "../platform/memo.js";
import { parseAddress } from "../verify/index.js";

/** Bytes of SHA-256 kept to bind a pass token to the visitor's network. */
export const NETWORK_HASH_BYTES = 8;

/**
 * The network a pass token is bound to: an IPv4 address's /24, an IPv6 address's /48
 * (a site's allocation; a home line gets a /56 or /64 inside it). Wide enough that a
 * visitor whose address changes within the provider's pool (DHCP, IPv6 privacy
 * addresses) keeps the token; narrow enough that a token lifted from one visitor is
 * worthless from a bot farm elsewhere. "" when there is no readable address: a token
 * issued then verifies only where the address is unreadable too.
 */
export function visitorNetwork(address: string): string {
  const parsed = parseAddress(address);
  if (parsed === null) return "";
  if (parsed.kind() === "ipv4") return `${parsed.toString().split(".").slice(0, 3).join(".")}.0/24`;
  return `${parsed.toNormalizedString().split(":").slice(0, 3).join(":")}::/48`;
}

/** Remembered per address (a returning visitor's repeats): the answer is shared, never modify it. */
export const networkHashBytes: (address: string) => Buffer = memoize((address) =>
  hash("sha256", visitorNetwork(address), "buffer").subarray(0, NETWORK_HASH_BYTES),
);

/** `networkHashBytes` as 16 lower-case hex characters, the form stored with a challenge. Remembered per address too. */
export const networkHash: (address: string) => string = memoize((address) => networkHashBytes(address).toString("hex"));
