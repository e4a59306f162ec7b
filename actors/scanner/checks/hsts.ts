import { defineCheck, outcome } from "../finding.js";
import { headerLine, headerValues, parseHsts } from "../records/headers.js";
import type { HttpExchange, WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { firstHttps } from "./support.js";

/** Six months, Observatory's bar for a meaningful HSTS max-age. */
export const HSTS_MIN_MAX_AGE = 15_768_000;
/** One year, required by the browsers' preload list. */
export const HSTS_PRELOAD_MAX_AGE = 31_536_000;

/**
 * The response HSTS is judged on: the first HTTPS response of the domain's own host that
 * sends the header (a browser records it from any of them), else the first one.
 */
export function hstsResponse(e: WebEvidence): HttpExchange | null {
  const first = firstHttps(e);
  if (!first) return null;
  const ownHost = e.https.hops.filter((hop) => hop.status !== null && new URL(hop.url).hostname === e.domain);
  return ownHost.find((hop) => headerValues(hop, "strict-transport-security").length > 0) ?? first;
}

/** Whether HSTS protects the host for at least six months (the cookie check's "protected by HSTS"). */
export function hstsProtects(e: WebEvidence): boolean {
  const result = hsts.run(e).result;
  return result === "hsts-ok" || result === "hsts-preload-ready";
}

/**
 * HSTS (RFC 6797) on the domain's own HTTPS responses. Sent twice, it is reported
 * invalid: RFC 6797 8.1 has browsers use the first, but any proxy may merge the two
 * into one comma-joined value that no browser accepts (and the Observatory scores so).
 */
export const hsts = defineCheck({
  id: "tls:hsts",
  group: "tls",
  label: "HTTP Strict Transport Security (HSTS)",
  section: "web",
  results: {
    "hsts-preload-ready": { status: "pass", summary: "HSTS covers subdomains for at least a year and asks for preloading." },
    "hsts-ok": { status: "pass", summary: "HSTS is set for at least six months." },
    "hsts-short": { status: "warn", summary: "HSTS max-age is shorter than six months." },
    "hsts-invalid": { status: "fail", summary: "The HSTS header is malformed or sent more than once, so browsers may ignore it." },
    "hsts-missing": { status: "fail", summary: "No HSTS header: the first visit can be downgraded to plain HTTP." },
    "hsts-no-https": { status: "fail", summary: "HSTS cannot be set without a working HTTPS site." },
  },
  run(e: WebEvidence) {
    const hop = hstsResponse(e);
    if (!hop) return outcome("hsts-no-https", `https://${e.domain}/: ${e.https.hops[0]?.error ?? "not tried"}.`);
    const values = headerValues(hop, "strict-transport-security");
    if (values.length === 0) return outcome("hsts-missing", `https://${e.domain}/ sends no Strict-Transport-Security header.`);
    const evidence = values.map((v) => headerLine("strict-transport-security", v)).join("\n");
    if (values.length > 1)
      return outcome("hsts-invalid", `Strict-Transport-Security is sent ${values.length} times; send it once.`, evidence);
    const parsed = parseHsts(values[0]);
    if (parsed.errors.length > 0 || parsed.maxAge === null) return outcome("hsts-invalid", parsed.errors.join("; "), evidence);
    if (parsed.maxAge < HSTS_MIN_MAX_AGE)
      return outcome("hsts-short", `max-age=${parsed.maxAge}; use at least ${HSTS_MIN_MAX_AGE} (six months).`, evidence);
    if (parsed.includeSubDomains && parsed.preload && parsed.maxAge >= HSTS_PRELOAD_MAX_AGE) {
      return outcome("hsts-preload-ready", `max-age=${parsed.maxAge} with includeSubDomains and preload.`, evidence);
    }
    const missing = [parsed.includeSubDomains ? null : "includeSubDomains", parsed.preload ? null : "preload"].filter((s) => s !== null);
    return outcome("hsts-ok", `max-age=${parsed.maxAge}${missing.length ? `; without ${missing.join(" and ")}` : ""}.`, evidence);
  },
});
