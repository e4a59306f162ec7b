/**
 * Which addresses an outbound request may reach, per purpose. Public unicast addresses are
 * always reachable; cloud metadata and host-service addresses, multicast, broadcast and
 * ::/96 never are; the rest — loopback, private ranges, link-local, CGNAT, unique-local and
 * their IPv4-in-IPv6 forms — only as the purpose's policy says:
 *
 * | Purpose   | Who names the target           | Non-public space reachable                         |
 * |-----------|--------------------------------|----------------------------------------------------|
 * | `scan`    | a customer (DNS, redirects)    | none; all with SCAN_ALLOW_PRIVATE (tests only)     |
 * | `probe`   | the operator (status services) | all with PROBE_ALLOW_PRIVATE or SCAN_ALLOW_PRIVATE |
 * | `siem`    | a customer (SIEM destinations) | the blocks of OUTBOUND_ALLOW_CIDRS                 |
 * | `webhook` | a customer (webhooks)          | the blocks of OUTBOUND_ALLOW_CIDRS                 |
 *
 * Pure: the admin API checks a literal destination address with it, and the SSRF guard
 * (shared/platform/net/outbound/ssrf.ts) every address a name resolves to, for every purpose.
 */
import net from "node:net";
import ipaddr from "ipaddr.js";
import type { Config } from "../config.js";

export type AddressCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export type OutboundPurpose = "scan" | "probe" | "siem" | "webhook";

/** Non-public addresses a purpose may reach: none, all of them, or those inside listed blocks. */
export type PrivateReach = "none" | "all" | readonly string[];

export interface OutboundPolicy {
  readonly purpose: OutboundPurpose;
  readonly reach: PrivateReach;
  /** `reach`'s blocks, parsed once; null unless `reach` is a list. */
  readonly blocks: net.BlockList | null;
}

/** `checkAddress` in production; tests narrow it to "loopback only" to exercise refusals against local servers. */
export type AddressPolicy = (ip: string, policy: OutboundPolicy) => AddressCheck;

/** A policy from its reach; list entries are addresses or CIDR blocks, already validated (shared/platform/config.ts). */
export function outboundPolicy(purpose: OutboundPurpose, reach: PrivateReach): OutboundPolicy {
  if (reach === "none" || reach === "all") return Object.freeze({ purpose, reach, blocks: null });
  const blocks = new net.BlockList();
  for (const entry of reach) {
    const [address, bits] = entry.split("/");
    const family = net.isIPv6(address) ? "ipv6" : "ipv4";
    if (bits === undefined) blocks.addAddress(address, family);
    else blocks.addSubnet(address, Number(bits), family);
  }
  return Object.freeze({ purpose, reach: Object.freeze([...reach]), blocks });
}

/** The settings that open non-public space, as loadConfig parsed them. */
export type OutboundConfig = Pick<Config, "scanAllowPrivate" | "probeAllowPrivate" | "outboundAllowCidrs">;

/** The one place a purpose's reach is decided from the configuration. */
export function outboundPolicyOf(purpose: OutboundPurpose, config: OutboundConfig): OutboundPolicy {
  switch (purpose) {
    case "scan":
      return outboundPolicy(purpose, config.scanAllowPrivate ? "all" : "none");
    case "probe":
      return outboundPolicy(purpose, config.probeAllowPrivate || config.scanAllowPrivate ? "all" : "none");
    case "siem":
    case "webhook":
      return outboundPolicy(purpose, config.outboundAllowCidrs.length > 0 ? config.outboundAllowCidrs : "none");
  }
}

/**
 * Cloud metadata and host services: AWS/GCP/Azure/OpenStack/DigitalOcean (169.254.169.254),
 * AWS over IPv6 (fd00:ec2::254), AWS ECS task credentials (169.254.170.2), EKS pod identity
 * (169.254.170.23, fd00:ec2::23), Azure's wireserver (168.63.129.16, a public address),
 * Alibaba Cloud (100.100.100.200, in the carrier-grade NAT block an operator may open for a
 * mesh network), Oracle Cloud (192.0.0.192). Refused always, whatever the policy (a listed
 * block that contains one included): a test setup never needs them, and they hand out
 * credentials (docs/security.md, item 8).
 */
const METADATA_ADDRESSES = new Set([
  "169.254.169.254",
  "fd00:ec2::254",
  "169.254.170.2",
  "169.254.170.23",
  "fd00:ec2::23",
  "168.63.129.16",
  "100.100.100.200",
  "192.0.0.192",
]);

/**
 * ::/96 (deprecated IPv4-compatible IPv6) other than :: and ::1: some stacks route them to
 * the IPv4 address. Node's parser, not ipaddr.js: ipaddr.js reads `::1.2.3.4` as `::ffff:1.2.3.4`.
 */
const IPV4_COMPATIBLE = new net.BlockList();
IPV4_COMPATIBLE.addSubnet("::", 96, "ipv6");
const UNSPECIFIED_OR_LOOPBACK = new net.BlockList();
UNSPECIFIED_OR_LOOPBACK.addSubnet("::", 127, "ipv6");
function ipv4Compatible(ip: string): boolean {
  return net.isIPv6(ip) && IPV4_COMPATIBLE.check(ip, "ipv6") && !UNSPECIFIED_OR_LOOPBACK.check(ip, "ipv6");
}

/** ipaddr.js range names, as refusal reasons. Anything not `unicast` is refused. */
const RANGE_REASONS: Readonly<Record<string, string>> = {
  loopback: "loopback",
  private: "private",
  linkLocal: "link_local",
  uniqueLocal: "unique_local",
  carrierGradeNat: "carrier_grade_nat",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
};

/** Never connectable, whatever the policy says. */
const ALWAYS_REFUSED = new Set(["multicast", "broadcast"]);

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const range = address.range();
  // NAT64 (64:ff9b::/96) and SIIT (::ffff:0:0:0/96) carry the IPv4 address in the last 32 bits.
  if (range === "rfc6052" || range === "rfc6145") return fromWords(p[6], p[7]);
  // 6to4 (2002::/16) carries it in bits 16..48.
  if (range === "6to4") return fromWords(p[1], p[2]);
  return null;
}

export function checkAddress(ip: string, policy: OutboundPolicy): AddressCheck {
  // net.isIP first: ipaddr.js also accepts legacy forms such as `127.1` or octal octets.
  if (net.isIP(ip) === 0 || !ipaddr.isValid(ip)) return { ok: false, reason: "invalid_address" };
  if (ipv4Compatible(ip)) return { ok: false, reason: "ipv4_compatible" };
  // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) into the IPv4 address it maps.
  let parsed = ipaddr.process(ip);
  if (parsed instanceof ipaddr.IPv6) {
    const inner = embeddedIPv4(parsed);
    if (inner) parsed = inner;
  }
  const normalized = parsed.toString();
  const range = parsed.range();
  if (ALWAYS_REFUSED.has(range)) return { ok: false, reason: range };
  if (METADATA_ADDRESSES.has(normalized)) return { ok: false, reason: "metadata" };
  if (range === "unicast") return { ok: true };
  if (policy.reach === "all") return { ok: true };
  if (policy.blocks?.check(normalized, parsed.kind() === "ipv6" ? "ipv6" : "ipv4")) return { ok: true };
  if (range === "teredo") return { ok: false, reason: "tunnel" };
  return { ok: false, reason: RANGE_REASONS[range] ?? "reserved" };
}

/**
 * The check the admin API makes when a destination is created: a literal address (or a
 * `localhost` name, which is loopback whatever DNS says) is judged now; any other name is
 * judged at every connection, after resolution (a name can change what it points at).
 * The refusal names the kind of address, never the address.
 */
export function literalRefusal(host: string, policy: OutboundPolicy): string | null {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  // `localhost.` is the same name as `localhost` (the root label written out): DNS resolves both alike.
  const name = bare.replace(/\.+$/, "");
  const literal = net.isIP(bare) !== 0 ? bare : name === "localhost" || name.endsWith(".localhost") ? "127.0.0.1" : null;
  if (literal === null) return null;
  const verdict = checkAddress(literal, policy);
  if (verdict.ok) return null;
  const opened =
    policy.purpose === "siem" || policy.purpose === "webhook"
      ? "; OUTBOUND_ALLOW_CIDRS lists the private blocks it may reach"
      : policy.purpose === "probe"
        ? "; PROBE_ALLOW_PRIVATE=1 lets the prober reach the operator's private services"
        : "";
  return `the address is refused (${verdict.reason}${verdict.reason === "metadata" ? "" : opened})`;
}
