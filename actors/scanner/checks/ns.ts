import { defineCheck, outcome } from "../finding.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, lookupFailed } from "./support.js";

/** RFC 1034 4.1 and RFC 2182: a zone needs at least two name servers. */
export const ns = defineCheck({
  id: "dns:ns",
  group: "dns",
  label: "Name servers",
  section: "dns",
  results: {
    "ns-ok": { status: "pass", summary: "The zone is served by at least two name servers." },
    "ns-single": { status: "warn", summary: "The zone is served by a single name server." },
    "ns-missing": { status: "fail", summary: "No NS records were found for the zone." },
    "ns-lookup-failed": { status: "warn", summary: "The NS records could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const evidence = formatAnswer(e.ns);
    if (lookupFailed(e.ns)) return outcome("ns-lookup-failed", `NS lookup of ${e.zone} failed: ${describeStatus(e.ns)}.`, evidence);
    const hosts = [...new Set(e.ns.records.flatMap((r) => (r.type === "NS" ? [r.host] : [])))];
    if (hosts.length === 0) return outcome("ns-missing", `${e.zone} returned ${describeStatus(e.ns)} for NS.`, evidence);
    if (hosts.length === 1) {
      return outcome("ns-single", `Only ${hosts[0]} serves ${e.zone}; RFC 2182 asks for two or more, on separate networks.`, evidence);
    }
    return outcome("ns-ok", `${hosts.length} name servers: ${hosts.join(", ")}.`, evidence);
  },
});
