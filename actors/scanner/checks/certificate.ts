import { defineCheck, outcome } from "../finding.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { firstHttps } from "./support.js";

const DAY_MS = 86_400_000;
/** Renewal automation normally renews 30 days ahead; two weeks left means it has stalled. */
export const EXPIRY_WARNING_DAYS = 14;

export const certificate = defineCheck({
  id: "tls:certificate",
  group: "tls",
  label: "TLS certificate",
  section: "web",
  results: {
    "cert-valid": { status: "pass", summary: "The certificate is trusted, matches the host name and is not close to expiry." },
    "cert-expiring": { status: "warn", summary: "The certificate expires in less than 14 days." },
    "cert-expired": { status: "fail", summary: "The certificate has expired." },
    "cert-not-yet-valid": { status: "fail", summary: "The certificate is not valid yet." },
    "cert-name-mismatch": { status: "fail", summary: "The certificate does not cover the host name." },
    "cert-untrusted": { status: "fail", summary: "The certificate does not chain to a trusted authority." },
    "cert-no-https": { status: "fail", summary: "The site does not answer over HTTPS." },
  },
  run(e: WebEvidence) {
    const hop = firstHttps(e);
    const cert = hop?.tls?.certificate ?? null;
    if (!hop?.tls || !cert) {
      const error = e.https.hops[0]?.error ?? "not tried";
      return outcome("cert-no-https", `https://${e.domain}/: ${error}.`, e.https.hops[0] ? `GET ${e.https.hops[0].url} -> ${error}` : "");
    }
    const evidence = [
      `subject: ${cert.subject}`,
      `issuer: ${cert.issuer}`,
      `valid: ${cert.validFrom} to ${cert.validTo}`,
      `names: ${cert.subjectAltNames.join(", ")}`,
    ].join("\n");
    const error = hop.tls.authorizationError;
    if (e.retrievedAt > cert.validToMs) return outcome("cert-expired", `Expired on ${cert.validTo}.`, evidence);
    if (e.retrievedAt < cert.validFromMs) return outcome("cert-not-yet-valid", `Valid only from ${cert.validFrom}.`, evidence);
    if (error === "ERR_TLS_CERT_ALTNAME_INVALID")
      return outcome(
        "cert-name-mismatch",
        `${e.domain} is not among ${cert.subjectAltNames.join(", ") || "the certificate names"}.`,
        evidence,
      );
    if (!hop.tls.authorized)
      return outcome("cert-untrusted", `Validation failed: ${error ?? "untrusted"}.`, `${evidence}\nerror: ${error ?? "untrusted"}`);
    const daysLeft = Math.floor((cert.validToMs - e.retrievedAt) / DAY_MS);
    if (daysLeft < EXPIRY_WARNING_DAYS)
      return outcome("cert-expiring", `${daysLeft} day(s) left (expires ${cert.validTo}); renew now.`, evidence);
    return outcome("cert-valid", `Issued by ${cert.issuer}; ${daysLeft} days left.`, evidence);
  },
});
