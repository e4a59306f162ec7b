import ipaddr from "ipaddr.js";
import { isAddressText } from "../platform/validation.js";
import type { KeySnapshot } from "./snapshots/types.js";
import { PASS, refuse, type Ask, type Verdict } from "./types.js";

/**
 * IP deny and allow lists: addresses and CIDR blocks, IPv4 and IPv6. Lists are parsed
 * once per snapshot version (see prepared.ts) into ranges grouped by family; an
 * IPv4-mapped IPv6 address or block is treated as the IPv4 one, so `::ffff:10.0.0.1`
 * and `10.0.0.1` are the same caller. The deny list always wins over the allowlist.
 */

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AddressList {
  readonly v4: readonly (readonly [ipaddr.IPv4, number])[];
  readonly v6: readonly (readonly [ipaddr.IPv6, number])[];
  readonly size: number;
}

export const EMPTY_LIST: AddressList = Object.freeze({ v4: [], v6: [], size: 0 });

/**
 * An address as text → parsed, IPv4-mapped IPv6 unwrapped; null when it is no address or
 * not written in a standard form (isAddressText: `167838211`, `10.1.3`, `0xa.1.2.3` are
 * refused, never read as 10.1.2.3 the way ipaddr.js alone would).
 */
export function parseAddress(raw: string | undefined | null): Address | null {
  if (!raw) return null;
  const text = raw.trim().replace(/^\[(.*)\]$/, "$1");
  if (!isAddressText(text)) return null;
  try {
    return ipaddr.process(text);
  } catch {
    return null;
  }
}

function parseRange(entry: string): readonly [Address, number] | null {
  const text = entry.trim();
  let address: Address;
  let bits: number;
  try {
    if (text.includes("/")) {
      [address, bits] = ipaddr.parseCIDR(text);
    } else {
      address = ipaddr.parse(text);
      bits = address.kind() === "ipv4" ? 32 : 128;
    }
  } catch {
    // Lists are validated when written (bad_cidr); an unreadable entry matches nothing.
    return null;
  }
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

export function compileList(entries: readonly string[]): AddressList {
  if (entries.length === 0) return EMPTY_LIST;
  const v4: [ipaddr.IPv4, number][] = [];
  const v6: [ipaddr.IPv6, number][] = [];
  for (const entry of entries) {
    const range = parseRange(entry);
    if (range === null) continue;
    if (range[0].kind() === "ipv4") v4.push([range[0] as ipaddr.IPv4, range[1]]);
    else v6.push([range[0] as ipaddr.IPv6, range[1]]);
  }
  return { v4, v6, size: entries.length };
}

export function listHas(list: AddressList, address: Address | null): boolean {
  if (address === null || list.size === 0) return false;
  if (address.kind() === "ipv4") {
    const a = address as ipaddr.IPv4;
    for (const [range, bits] of list.v4) if (a.match(range, bits)) return true;
  } else {
    const a = address as ipaddr.IPv6;
    for (const [range, bits] of list.v6) if (a.match(range, bits)) return true;
  }
  return false;
}

/**
 * The address the IP and country rules judge: the visitor's (`ip` parameter) when a
 * server key asks on a visitor's behalf, unless IP binding is on for the key; then the
 * connecting address counts whatever was sent. A client key is public: what its caller
 * claims proves nothing, so its `ip` is never honoured (docs/security.md, item 2). An
 * `ip` that is no address is refused by checkIpParam before the IP rules run; here one
 * still matches no list and no country.
 */
export function callerAddress(
  key: Pick<KeySnapshot, "ip_binding" | "kind">,
  ask: Pick<Ask, "visitorIp" | "remoteAddress">,
): Address | null {
  if (key.ip_binding || key.kind !== "server" || ask.visitorIp === undefined) return parseAddress(ask.remoteAddress);
  return parseAddress(ask.visitorIp);
}

/**
 * verify.php's `ip`, when sent, must be an address, for every key kind: it is refused
 * `bad_ip`, never judged as "no address" (which no deny list and no country rule matches).
 * A rule of the chain, so a known key's malformed call counts (interface.md section 8).
 */
export function checkIpParam(visitorIp: string | undefined): Verdict {
  return visitorIp === undefined || parseAddress(visitorIp) !== null ? PASS : refuse("bad_ip");
}

export function checkIpDeny(deny: AddressList, address: Address | null): Verdict {
  return listHas(deny, address) ? refuse("ip_blocked") : PASS;
}

export function checkIpAllow(allow: AddressList, address: Address | null): Verdict {
  if (allow.size === 0) return PASS;
  return listHas(allow, address) ? PASS : refuse("ip_not_allowed");
}
