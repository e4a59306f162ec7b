/**
 * Which addresses a request to a customer-controlled name may reach: not loopback, private
 * ranges, link-local and the cloud metadata address, CGNAT, nor their IPv4-in-IPv6 forms.
 * Pure: the admin API checks a literal destination address with it, and the SSRF guard
 * (actors/scanner/retrieve/ssrf.ts) every address a name resolves to.
 */
import net from "node:net";
import ipaddr from "ipaddr.js";

export type AddressCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** `checkAddress` in production; tests narrow it to "loopback only" to exercise refusals against local servers. */
export type AddressPolicy = (ip: string, allowPrivate: boolean) => AddressCheck;

/**
 * Cloud metadata and host services: AWS/GCP/Azure/OpenStack (169.254.169.254), AWS over
 * IPv6 (fd00:ec2::254), Azure's wireserver (168.63.129.16, a public address). Refused
 * always, even with SCAN_ALLOW_PRIVATE=1: a test setup never needs them, and they hand
 * out credentials (docs/security.md, item 8).
 */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "fd00:ec2::254", "168.63.129.16"]);

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

/** Never connectable, whatever `allowPrivate` says. */
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

export function checkAddress(ip: string, allowPrivate: boolean): AddressCheck {
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
  if (allowPrivate) return { ok: true };
  if (range === "unicast") return { ok: true };
  if (range === "teredo") return { ok: false, reason: "tunnel" };
  return { ok: false, reason: RANGE_REASONS[range] ?? "reserved" };
}
