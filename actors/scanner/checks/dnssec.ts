import { defineCheck, outcome } from "../finding.js";
import type { CheckedAnswer, DnsAnswer, DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, lookupFailed } from "./support.js";

/** A SERVFAIL that becomes an answer once validation is off: the signatures are bogus (RFC 4035 3.2.2). */
function isBogus({ answer, unchecked }: CheckedAnswer): boolean {
  return answer.status === "servfail" && unchecked !== null && !lookupFailed(unchecked);
}

function flagged(answer: DnsAnswer): string {
  return `${formatAnswer(answer)}${answer.authenticated ? " (ad)" : ""}`;
}

/**
 * DNSSEC judged on the domain's own answers through the configured (validating)
 * resolver, in the zone found by DNS (retrieve/zone-cut.ts), never the registrable
 * domain's: a delegated child zone has its own keys, or none. The AD flag on the
 * domain's SOA answer (data or a signed denial) says it validated; a SERVFAIL on any of
 * its answers that resolves with CD says bogus (broken or expired signatures, a DS that
 * matches no key). A zone that publishes keys whose answers are not validated is
 * "signed, not confirmed": an island without a DS at the parent, or a resolver that does
 * not validate.
 */
export const dnssec = defineCheck({
  id: "dns:dnssec",
  group: "dns",
  label: "DNSSEC",
  section: "dns",
  results: {
    "dnssec-validated": { status: "pass", summary: "The domain's DNS answers are DNSSEC-validated." },
    "dnssec-signed-unconfirmed": {
      status: "info",
      summary: "The zone publishes DNSSEC keys, but its answers were not validated (no chain of trust, or the resolver does not validate).",
    },
    "dnssec-unsigned": { status: "warn", summary: "The domain's zone is not signed with DNSSEC." },
    "dnssec-bogus": { status: "fail", summary: "DNSSEC validation of the domain fails: validating resolvers cannot resolve it." },
    "dnssec-lookup-failed": { status: "warn", summary: "The DNSSEC status could not be determined." },
  },
  run(e: DnsEvidence) {
    const [own] = e.dnssec.answers;
    const keys = e.dnssec.dnskey.unchecked ?? e.dnssec.dnskey.answer;
    const zoneNote = e.zoneSource === "soa" ? `zone ${e.zone}` : `zone ${e.zone} (by the public suffix list: no answer named the zone)`;
    const evidence = [own.answer, e.dnssec.dnskey.answer].map(flagged).join("\n");
    const bogus = e.dnssec.answers.filter(isBogus);
    if (bogus.length > 0) {
      const names = bogus.map(({ answer }) => `${answer.name} ${answer.type}`).join(", ");
      const shown = bogus
        .map(({ answer, unchecked }) => `${formatAnswer(answer)}\n${formatAnswer(unchecked ?? answer)} (CD set)`)
        .join("\n");
      return outcome("dnssec-bogus", `${names} fail validation (SERVFAIL) but resolve with checking disabled; ${zoneNote}.`, shown);
    }
    if (lookupFailed(own.answer))
      return outcome("dnssec-lookup-failed", `SOA lookup of ${own.answer.name} failed: ${describeStatus(own.answer)}.`, evidence);
    if (own.answer.authenticated)
      return outcome("dnssec-validated", `The resolver set the AD flag on the answer for ${own.answer.name} SOA; ${zoneNote}.`, evidence);
    if (keys.records.some((r) => r.type === "DNSKEY")) {
      return outcome(
        "dnssec-signed-unconfirmed",
        `${e.zone} has DNSKEY records, but the answers for ${e.domain} carried no AD flag.`,
        evidence,
      );
    }
    return outcome(
      "dnssec-unsigned",
      `${e.zone} has no DNSKEY records and answers for ${e.domain} are not authenticated; ${zoneNote}.`,
      evidence,
    );
  },
});
