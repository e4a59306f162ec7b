import { defineCheck, outcome } from "../finding.js";
import { SPF_LOOKUP_LIMIT, SPF_VOID_LIMIT, spfKey, spfRecords, walkSpf } from "../records/spf.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";

/**
 * RFC 7208 4.6.4 budgets: at most 10 mechanisms and modifiers that need DNS (include, a,
 * mx, ptr, exists, redirect), counted through every include, and at most 2 of them void.
 * Past either, receivers return permerror and SPF protects nothing.
 */
export const spfLookups = defineCheck({
  id: "mail:spf-lookups",
  group: "mail",
  label: "SPF DNS lookup limit",
  section: "dns",
  results: {
    "spf-lookups-ok": { status: "pass", summary: "SPF evaluation stays within 10 DNS lookups and 2 void lookups." },
    "spf-lookups-exceeded": { status: "fail", summary: "SPF evaluation needs more than 10 DNS lookups: receivers return permerror." },
    "spf-void-exceeded": { status: "fail", summary: "SPF evaluation hits more than 2 void lookups: receivers return permerror." },
    "spf-include-broken": { status: "fail", summary: "An included or redirected SPF record is missing, duplicated, broken or loops." },
    "spf-lookups-not-applicable": { status: "info", summary: "No single SPF record to evaluate." },
  },
  run(e: DnsEvidence) {
    const apex = e.spf[spfKey("txt", e.domain)] ?? e.txt;
    if (spfRecords(apex).length !== 1) return outcome("spf-lookups-not-applicable", "See the SPF record finding.");
    const walk = walkSpf(e.domain, (key) => e.spf[key]);
    const evidence = walk.trail.join("\n");
    const counts = `${walk.lookups} lookup(s), ${walk.voidLookups} void`;
    if (walk.lookups > SPF_LOOKUP_LIMIT) {
      return outcome(
        "spf-lookups-exceeded",
        `${counts}; the limit is ${SPF_LOOKUP_LIMIT}. Flatten includes or drop unused ones.`,
        evidence,
      );
    }
    if (walk.voidLookups > SPF_VOID_LIMIT) {
      return outcome(
        "spf-void-exceeded",
        `${counts}; at most ${SPF_VOID_LIMIT} lookups may return no data. Remove terms that name non-existent hosts.`,
        evidence,
      );
    }
    // The apex's own syntax errors belong to mail:spf; errors below it are this check's.
    const nested = walk.errors.filter((error) => !error.startsWith(`${e.domain}: `) || /loops back/.test(error));
    if (nested.length > 0) return outcome("spf-include-broken", nested.join("; "), evidence);
    if (walk.missing.length > 0)
      return outcome("spf-lookups-ok", `${counts} among the records retrieved (not all nested records were fetched).`, evidence);
    return outcome("spf-lookups-ok", `${counts}.`, evidence);
  },
});
