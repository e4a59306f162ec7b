import { defineCheck, outcome } from "../finding.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, lookupFailed } from "./support.js";

const KNOWN_TAGS = new Set(["issue", "issuewild", "iodef", "issuemail", "issuevmc", "contactemail", "contactphone"]);

/**
 * RFC 8659: the relevant CAA set is the first non-empty one climbing from the name
 * towards the zone. An unknown tag with the critical flag forbids every issuance.
 */
export const caa = defineCheck({
  id: "dns:caa",
  group: "dns",
  label: "Certification Authority Authorization (CAA)",
  section: "dns",
  results: {
    "caa-ok": { status: "pass", summary: "CAA records restrict which certificate authorities may issue." },
    "caa-no-issue": { status: "warn", summary: "CAA records exist but none restricts issuance (no issue tag)." },
    "caa-missing": { status: "warn", summary: "No CAA records: any certificate authority may issue for this domain." },
    "caa-invalid": { status: "fail", summary: "The CAA records contain an error." },
    "caa-lookup-failed": { status: "warn", summary: "The CAA records could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const failedLookup = e.caa.find(lookupFailed);
    const relevant = e.caa.find((answer) => answer.records.some((r) => r.type === "CAA"));
    if (!relevant) {
      if (failedLookup)
        return outcome(
          "caa-lookup-failed",
          `CAA lookup of ${failedLookup.name} failed: ${describeStatus(failedLookup)}.`,
          formatAnswer(failedLookup),
        );
      const names = e.caa.map((a) => a.name).join(", ");
      return outcome("caa-missing", `No CAA records at ${names}.`, e.caa.map(formatAnswer).join("\n"));
    }
    const records = relevant.records.flatMap((r) => (r.type === "CAA" ? [r] : []));
    const evidence = formatAnswer(relevant);
    const problems: string[] = [];
    for (const r of records) {
      if (!KNOWN_TAGS.has(r.tag) && (r.flags & 128) !== 0) problems.push(`critical unknown tag "${r.tag}" blocks all issuance`);
      if ((r.tag === "issue" || r.tag === "issuewild") && !/^\s*(;.*)?$|^\s*[a-z0-9.-]+\s*(;.*)?$/i.test(r.value)) {
        problems.push(`${r.tag} value ${JSON.stringify(r.value)} is not an issuer domain`);
      }
      if (r.tag === "iodef" && !/^(mailto:|https?:\/\/)/i.test(r.value))
        problems.push(`iodef ${JSON.stringify(r.value)} is not a mailto: or http(s): URL`);
    }
    if (problems.length > 0) return outcome("caa-invalid", `At ${relevant.name}: ${problems.join("; ")}.`, evidence);
    const issuers = records.filter((r) => r.tag === "issue" || r.tag === "issuewild");
    if (issuers.length === 0) return outcome("caa-no-issue", `The CAA set at ${relevant.name} has no issue or issuewild tag.`, evidence);
    const names = [...new Set(issuers.map((r) => r.value.split(";")[0].trim() || "(none)"))];
    return outcome("caa-ok", `At ${relevant.name}, issuance is limited to: ${names.join(", ")}.`, evidence);
  },
});
