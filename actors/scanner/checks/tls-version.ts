import { defineCheck, outcome } from "../finding.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { firstHttps } from "./support.js";

const MODERN = new Set(["TLSv1.2", "TLSv1.3"]);

/** TLS 1.0 and 1.1 are deprecated (RFC 8996); the best version the server offers must be 1.2 or 1.3. */
export const tlsVersion = defineCheck({
  id: "tls:version",
  group: "tls",
  label: "TLS protocol version",
  section: "web",
  results: {
    "tls-modern": { status: "pass", summary: "The server negotiates TLS 1.2 or 1.3 and refuses older versions." },
    "tls-legacy-enabled": { status: "warn", summary: "The server still accepts TLS 1.0 or 1.1 (RFC 8996 deprecates them)." },
    "tls-obsolete": { status: "fail", summary: "The best protocol the server offers is older than TLS 1.2." },
    "tls-not-applicable": { status: "info", summary: "No HTTPS response to judge." },
  },
  run(e: WebEvidence) {
    const protocol = firstHttps(e)?.tls?.protocol ?? null;
    if (protocol === null) return outcome("tls-not-applicable", "See the certificate finding.");
    const evidence = `negotiated: ${protocol}${e.legacyTls === null ? "" : `\nTLS 1.1 handshake: ${e.legacyTls ? "accepted" : "refused"}`}`;
    if (!MODERN.has(protocol)) return outcome("tls-obsolete", `Negotiated ${protocol}; enable TLS 1.2 and 1.3.`, evidence);
    if (e.legacyTls === true)
      return outcome(
        "tls-legacy-enabled",
        `Negotiated ${protocol}, but a TLS 1.1 handshake also succeeds; disable TLS 1.0 and 1.1.`,
        evidence,
      );
    return outcome("tls-modern", `Negotiated ${protocol}.`, evidence);
  },
});
