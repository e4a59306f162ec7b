import { defineCheck, outcome } from "../finding.js";
import { effectiveAll, parseSpf, spfKey, spfRecords } from "../records/spf.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, lookupFailed, txtEvidence } from "./support.js";

/**
 * The SPF record itself (RFC 7208): exactly one `v=spf1` TXT, valid syntax, and an
 * ending that rejects or soft-fails strangers. `+all` authorises the whole internet.
 * The lookup budget is its own check (mail:spf-lookups).
 */
export const spf = defineCheck({
  id: "mail:spf",
  group: "mail",
  label: "SPF record",
  section: "dns",
  results: {
    "spf-hardfail": { status: "pass", summary: "SPF ends in -all: mail from unlisted hosts fails." },
    "spf-softfail": { status: "pass", summary: "SPF ends in ~all: mail from unlisted hosts soft-fails." },
    "spf-ptr": { status: "warn", summary: "SPF uses the ptr mechanism, which RFC 7208 says not to use." },
    "spf-neutral": { status: "warn", summary: "SPF does not reject unlisted senders (?all or no all)." },
    "spf-pass-all": { status: "fail", summary: "SPF ends in +all: every host on the internet may send as this domain." },
    "spf-syntax": { status: "fail", summary: "The SPF record has syntax errors (permerror)." },
    "spf-multiple": { status: "fail", summary: "More than one SPF record: receivers treat this as a permanent error." },
    "spf-missing": { status: "fail", summary: "No SPF record: anyone can claim to send mail for this domain." },
    "spf-lookup-failed": { status: "warn", summary: "The SPF record could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const apex = e.spf[spfKey("txt", e.domain)] ?? e.txt;
    if (lookupFailed(apex)) return outcome("spf-lookup-failed", `TXT lookup of ${e.domain} failed: ${describeStatus(apex)}.`);
    const records = spfRecords(apex);
    const evidence = txtEvidence(e.domain, records);
    if (records.length === 0) return outcome("spf-missing", `${e.domain} has no TXT record starting with v=spf1.`, formatAnswer(apex));
    if (records.length > 1)
      return outcome("spf-multiple", `${records.length} SPF records found; publish exactly one (RFC 7208 4.5).`, evidence);
    const parsed = parseSpf(records[0]);
    if (parsed.errors.length > 0) return outcome("spf-syntax", parsed.errors.join("; "), evidence);
    const get = (key: string) => e.spf[key];
    const all = effectiveAll(e.domain, get);
    const via = all && all.source !== e.domain ? ` (through redirect to ${all.source})` : "";
    if (all?.qualifier === "+") return outcome("spf-pass-all", `The record ends in +all${via}; use -all or ~all.`, evidence);
    if (!all || all.qualifier === "?") {
      return outcome(
        "spf-neutral",
        all
          ? `The record ends in ?all${via}, which says nothing about strangers.`
          : "The record has no all mechanism and no redirect: unlisted senders get neutral.",
        evidence,
      );
    }
    if (parsed.terms.some((t) => t.kind === "mechanism" && t.name === "ptr")) {
      return outcome("spf-ptr", "ptr is slow, unreliable and deprecated (RFC 7208 5.5); list the addresses instead.", evidence);
    }
    if (all.qualifier === "-") return outcome("spf-hardfail", `Unlisted senders fail${via}.`, evidence);
    return outcome("spf-softfail", `Unlisted senders soft-fail${via}; with DMARC enforcing, this is enough.`, evidence);
  },
});
