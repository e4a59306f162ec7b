import { defineCheck, outcome } from "../finding.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { formatAnswer, lookupFailed } from "./support.js";

/** Informational: whether the name is reachable over IPv4 and IPv6. Never penalised. */
export const address = defineCheck({
  id: "dns:address",
  group: "dns",
  label: "IPv4 and IPv6 addresses",
  section: "dns",
  results: {
    "address-dual-stack": { status: "pass", summary: "The domain has IPv4 and IPv6 addresses." },
    "address-ipv4-only": { status: "info", summary: "The domain has IPv4 addresses but no IPv6 address." },
    "address-ipv6-only": { status: "info", summary: "The domain has IPv6 addresses but no IPv4 address." },
    "address-none": { status: "info", summary: "The domain itself has no address records." },
    "address-lookup-failed": { status: "info", summary: "The address records could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const evidence = [e.a, e.aaaa].map(formatAnswer).join("\n");
    if (lookupFailed(e.a) && lookupFailed(e.aaaa))
      return outcome("address-lookup-failed", `A and AAAA lookups of ${e.domain} failed.`, evidence);
    const v4 = e.a.records.length > 0;
    const v6 = e.aaaa.records.length > 0;
    if (v4 && v6) return outcome("address-dual-stack", `${e.domain} resolves over both address families.`, evidence);
    if (v4) return outcome("address-ipv4-only", `${e.domain} has no AAAA record; IPv6-only clients cannot reach it.`, evidence);
    if (v6) return outcome("address-ipv6-only", `${e.domain} has no A record; IPv4-only clients cannot reach it.`, evidence);
    return outcome("address-none", `${e.domain} has neither A nor AAAA records (fine for a mail-only domain).`, evidence);
  },
});
