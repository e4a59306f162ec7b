import { defineCheck, outcome } from "../finding.js";
import { dmarcRecords, parseDmarc } from "../records/dmarc.js";
import type { DnsAnswer, DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { describeStatus, formatAnswer, lookupFailed, txtEvidence } from "./support.js";

/**
 * DMARC (RFC 7489): one record at `_dmarc.<domain>` (or, for a subdomain, at the
 * organisational domain, whose `sp=` then applies), a policy that acts on failures,
 * applied to all mail (pct=100), and an aggregate report address so the owner sees abuse.
 */
export const dmarc = defineCheck({
  id: "mail:dmarc",
  group: "mail",
  label: "DMARC policy",
  section: "dns",
  results: {
    "dmarc-reject": { status: "pass", summary: "DMARC tells receivers to reject mail that fails authentication." },
    "dmarc-quarantine": { status: "pass", summary: "DMARC tells receivers to quarantine mail that fails authentication." },
    "dmarc-no-rua": { status: "warn", summary: "DMARC enforces a policy but asks for no aggregate reports (rua)." },
    "dmarc-partial": { status: "warn", summary: "DMARC applies its policy to only part of the failing mail (pct below 100)." },
    "dmarc-none": { status: "warn", summary: "DMARC is in monitoring mode (p=none): failing mail is still delivered." },
    "dmarc-syntax": { status: "fail", summary: "The DMARC record has errors, so receivers may ignore it." },
    "dmarc-multiple": { status: "fail", summary: "More than one DMARC record: receivers ignore them all." },
    "dmarc-missing": { status: "fail", summary: "No DMARC record: receivers get no policy for mail that fails SPF and DKIM." },
    "dmarc-lookup-failed": { status: "warn", summary: "The DMARC record could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const own = dmarcRecords(e.dmarc);
    // RFC 7489 6.6.3: with no record at the domain, the organisational domain's applies.
    const useZone = own.length === 0 && e.dmarcZone !== null && !lookupFailed(e.dmarc);
    const answer: DnsAnswer = useZone && e.dmarcZone ? e.dmarcZone : e.dmarc;
    if (lookupFailed(answer)) return outcome("dmarc-lookup-failed", `TXT lookup of ${answer.name} failed: ${describeStatus(answer)}.`);
    const records = dmarcRecords(answer);
    const evidence = txtEvidence(answer.name, records);
    if (records.length === 0) {
      const seen = [e.dmarc, ...(e.dmarcZone ? [e.dmarcZone] : [])];
      return outcome("dmarc-missing", `No v=DMARC1 record at ${seen.map((a) => a.name).join(" or ")}.`, seen.map(formatAnswer).join("\n"));
    }
    if (records.length > 1)
      return outcome("dmarc-multiple", `${records.length} DMARC records at ${answer.name}; publish exactly one.`, evidence);
    const parsed = parseDmarc(records[0]);
    if (parsed.errors.length > 0) return outcome("dmarc-syntax", parsed.errors.join("; "), evidence);
    const policy = useZone ? (parsed.subdomainPolicy ?? parsed.policy) : parsed.policy;
    const where = useZone ? ` (inherited from ${answer.name})` : "";
    if (policy === "none" || policy === null)
      return outcome("dmarc-none", `p=none${where}: move to quarantine, then reject, once reports look clean.`, evidence);
    if (parsed.pct < 100)
      return outcome("dmarc-partial", `p=${policy} with pct=${parsed.pct}${where}: the rest of failing mail is only monitored.`, evidence);
    if (parsed.rua.length === 0) return outcome("dmarc-no-rua", `p=${policy}${where}, but without rua= nobody sees the reports.`, evidence);
    return outcome(
      policy === "reject" ? "dmarc-reject" : "dmarc-quarantine",
      `p=${policy}${where}; reports to ${parsed.rua.join(", ")}.`,
      evidence,
    );
  },
});
