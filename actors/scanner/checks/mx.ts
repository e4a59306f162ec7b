import { defineCheck, outcome } from "../finding.js";
import { type DnsEvidence, type MxHostLookup, NON_PUBLIC_ADDRESS } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, hasNullMx, lookupFailed } from "./support.js";

function onlyNonPublic(host: MxHostLookup): boolean {
  const addresses = [...host.a.records, ...host.aaaa.records].flatMap((r) => (r.type === "A" || r.type === "AAAA" ? [r.address] : []));
  return addresses.length > 0 && addresses.every((address) => address === NON_PUBLIC_ADDRESS);
}

/**
 * MX records: present, or an explicit null MX (RFC 7505) for a domain that takes no
 * mail; each exchange a host name with addresses, not an alias (RFC 2181 10.3,
 * RFC 5321 5.1), not an IP literal, and reachable: an exchange whose every address is one
 * the scan may not reach (private, loopback, ...: NON_PUBLIC_ADDRESS in the evidence)
 * receives no mail from the internet.
 */
export const mx = defineCheck({
  id: "mail:mx",
  group: "mail",
  label: "Mail exchangers (MX)",
  section: "dns",
  results: {
    "mx-ok": { status: "pass", summary: "MX records point at host names with addresses." },
    "mx-null": { status: "info", summary: "The domain publishes a null MX: it accepts no e-mail." },
    "mx-missing": { status: "warn", summary: "No MX records: senders fall back to the domain's address records." },
    "mx-cname": { status: "fail", summary: "An MX record points at an alias (CNAME), which RFC 2181 forbids." },
    "mx-unresolvable": { status: "fail", summary: "An MX host has no address records: mail to it cannot be delivered." },
    "mx-not-public": {
      status: "fail",
      summary: "An MX host resolves only to non-public addresses: mail from the internet cannot reach it.",
    },
    "mx-invalid": { status: "fail", summary: "An MX record is malformed." },
    "mx-lookup-failed": { status: "warn", summary: "The MX records could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const evidence = formatAnswer(e.mx);
    if (lookupFailed(e.mx)) return outcome("mx-lookup-failed", `MX lookup of ${e.domain} failed: ${describeStatus(e.mx)}.`, evidence);
    const records = e.mx.records.flatMap((r) => (r.type === "MX" ? [r] : []));
    if (records.length === 0)
      return outcome(
        "mx-missing",
        `${e.domain} has no MX records (${describeStatus(e.mx)}); publish MX, or "0 ." if it sends and receives no mail.`,
        evidence,
      );
    if (hasNullMx(e.mx)) return outcome("mx-null", `${e.domain} declares it receives no mail (RFC 7505).`, evidence);
    if (records.some((r) => r.exchange === ""))
      return outcome("mx-invalid", "A null MX must be the only MX record (RFC 7505 3).", evidence);
    const literal = records.find((r) => /^[\d.]+$|:/.test(r.exchange));
    if (literal) return outcome("mx-invalid", `MX ${literal.exchange} is an IP address; MX must name a host.`, evidence);
    const hostEvidence = e.mxHosts.map((h) => `${formatAnswer(h.a)}\n${formatAnswer(h.aaaa)}`).join("\n");
    const aliased = e.mxHosts.filter((h) => h.a.aliases.length > 0 || h.aaaa.aliases.length > 0);
    if (aliased.length > 0) {
      const list = aliased.map((h) => `${h.exchange} -> ${h.a.aliases[0] ?? h.aaaa.aliases[0]}`).join(", ");
      return outcome("mx-cname", `MX target is a CNAME: ${list}.`, `${evidence}\n${hostEvidence}`);
    }
    const dead = e.mxHosts.filter((h) => h.a.records.length === 0 && h.aaaa.records.length === 0 && !lookupFailed(h.a));
    if (dead.length > 0) {
      return outcome("mx-unresolvable", `No A or AAAA for ${dead.map((h) => h.exchange).join(", ")}.`, `${evidence}\n${hostEvidence}`);
    }
    const internal = e.mxHosts.filter(onlyNonPublic);
    if (internal.length > 0) {
      const list = internal.map((h) => h.exchange).join(", ");
      return outcome("mx-not-public", `Only non-public addresses for ${list}.`, `${evidence}\n${hostEvidence}`);
    }
    return outcome("mx-ok", `${records.length} MX record(s): ${records.map((r) => `${r.priority} ${r.exchange}`).join(", ")}.`, evidence);
  },
});
