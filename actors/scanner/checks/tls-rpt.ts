import { defineCheck, outcome } from "../finding.js";
import { isTlsRptRecord, parseTlsRpt } from "../records/mail-tls.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { formatAnswer, hasNullMx, lookupFailed, txtEvidence, txtTexts } from "./support.js";

/** SMTP TLS Reporting (RFC 8460): one `v=TLSRPTv1` record at `_smtp._tls` with a rua. */
export const tlsRpt = defineCheck({
  id: "mail:tls-rpt",
  group: "mail",
  label: "SMTP TLS reporting (TLS-RPT)",
  section: "dns",
  results: {
    "tls-rpt-ok": { status: "pass", summary: "Senders report TLS delivery failures to the domain owner." },
    "tls-rpt-invalid": { status: "fail", summary: "The TLS-RPT record is invalid." },
    "tls-rpt-missing": { status: "warn", summary: "No TLS-RPT record: TLS failures on inbound mail go unreported." },
    "tls-rpt-not-applicable": { status: "info", summary: "The domain receives no mail." },
    "tls-rpt-lookup-failed": { status: "warn", summary: "The TLS-RPT record could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const name = e.tlsRpt.name;
    if (lookupFailed(e.tlsRpt)) return outcome("tls-rpt-lookup-failed", `TXT lookup of ${name} failed.`);
    const texts = txtTexts(e.tlsRpt).filter(isTlsRptRecord);
    if (texts.length === 0) {
      const noMail = hasNullMx(e.mx) || !e.mx.records.some((r) => r.type === "MX");
      return noMail
        ? outcome("tls-rpt-not-applicable", "No MX hosts.")
        : outcome("tls-rpt-missing", `No v=TLSRPTv1 record at ${name}.`, formatAnswer(e.tlsRpt));
    }
    const evidence = txtEvidence(name, texts);
    if (texts.length > 1) return outcome("tls-rpt-invalid", `${texts.length} TLSRPTv1 records; RFC 8460 3 allows one.`, evidence);
    const parsed = parseTlsRpt(texts[0]);
    if (parsed.errors.length > 0) return outcome("tls-rpt-invalid", parsed.errors.join("; "), evidence);
    return outcome("tls-rpt-ok", `Reports go to ${parsed.rua.join(", ")}.`, evidence);
  },
});
