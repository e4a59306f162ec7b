import { defineCheck, outcome } from "../finding.js";
import type { DnsEvidence } from "../retrieve/evidence.js";
import { describeStatus, formatAnswer, lookupFailed } from "./support.js";

/**
 * DNSSEC as seen through the configured resolver: the AD flag of a DO query says the
 * answer validated; SERVFAIL that disappears with CD set says the signatures are bogus.
 * A resolver that does not validate never sets AD, so a published DNSKEY without AD is
 * reported as "signed, not confirmed" rather than as unsigned.
 */
export const dnssec = defineCheck({
  id: "dns:dnssec",
  group: "dns",
  label: "DNSSEC",
  section: "dns",
  results: {
    "dnssec-validated": { status: "pass", summary: "Answers for the zone are DNSSEC-validated." },
    "dnssec-signed-unconfirmed": { status: "info", summary: "The zone publishes DNSSEC keys, but the resolver did not confirm validation." },
    "dnssec-unsigned": { status: "warn", summary: "The zone is not signed with DNSSEC." },
    "dnssec-bogus": { status: "fail", summary: "DNSSEC validation of the zone fails: validating resolvers cannot resolve it." },
    "dnssec-lookup-failed": { status: "warn", summary: "The DNSSEC status could not be determined." },
  },
  run(e: DnsEvidence) {
    const { soa, soaUnchecked, dnskey } = e.dnssec;
    const evidence = [soa, dnskey].map(formatAnswer).join("\n");
    if (soa.status === "servfail" && soaUnchecked && soaUnchecked.status === "noerror") {
      return outcome("dnssec-bogus", `SOA of ${e.zone} fails with validation (SERVFAIL) but resolves with checking disabled.`, `${evidence}\n${formatAnswer(soaUnchecked)} (CD set)`);
    }
    if (lookupFailed(soa)) return outcome("dnssec-lookup-failed", `SOA lookup of ${e.zone} failed: ${describeStatus(soa)}.`, evidence);
    if (soa.authenticated) return outcome("dnssec-validated", `The resolver set the AD flag on the SOA of ${e.zone}.`, `${evidence}\nflags: ad`);
    if (dnskey.records.length > 0) {
      return outcome("dnssec-signed-unconfirmed", `${e.zone} has DNSKEY records, but the answer carried no AD flag (the resolver may not validate).`, evidence);
    }
    return outcome("dnssec-unsigned", `${e.zone} has no DNSKEY records and answers are not authenticated.`, evidence);
  },
});
