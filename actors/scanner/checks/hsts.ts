import { defineCheck, outcome } from "../finding.js";
import { headerLine, headerValues, parseHsts } from "../records/headers.js";
import type { WebEvidence } from "../retrieve/evidence.js";
import { firstHttps } from "./support.js";

/** Six months, Observatory's bar for a meaningful HSTS max-age. */
export const HSTS_MIN_MAX_AGE = 15_768_000;
/** One year, required by the browsers' preload list. */
export const HSTS_PRELOAD_MAX_AGE = 31_536_000;

/** HSTS (RFC 6797) is judged on the domain's own first HTTPS response; browsers use only the first header. */
export const hsts = defineCheck({
  id: "tls:hsts",
  group: "tls",
  label: "HTTP Strict Transport Security (HSTS)",
  section: "web",
  results: {
    "hsts-preload-ready": { status: "pass", summary: "HSTS covers subdomains for at least a year and asks for preloading." },
    "hsts-ok": { status: "pass", summary: "HSTS is set for at least six months." },
    "hsts-short": { status: "warn", summary: "HSTS max-age is shorter than six months." },
    "hsts-invalid": { status: "fail", summary: "The HSTS header is malformed, so browsers ignore it." },
    "hsts-missing": { status: "fail", summary: "No HSTS header: the first visit can be downgraded to plain HTTP." },
    "hsts-no-https": { status: "fail", summary: "HSTS cannot be set without a working HTTPS site." },
  },
  run(e: WebEvidence) {
    const hop = firstHttps(e);
    if (!hop) return outcome("hsts-no-https", `https://${e.domain}/: ${e.https.hops[0]?.error ?? "not tried"}.`);
    const values = headerValues(hop, "strict-transport-security");
    if (values.length === 0) return outcome("hsts-missing", `https://${e.domain}/ sends no Strict-Transport-Security header.`);
    const evidence = headerLine("strict-transport-security", values[0]);
    const parsed = parseHsts(values[0]);
    if (parsed.errors.length > 0 || parsed.maxAge === null) return outcome("hsts-invalid", parsed.errors.join("; "), evidence);
    if (parsed.maxAge < HSTS_MIN_MAX_AGE) return outcome("hsts-short", `max-age=${parsed.maxAge}; use at least ${HSTS_MIN_MAX_AGE} (six months).`, evidence);
    if (parsed.includeSubDomains && parsed.preload && parsed.maxAge >= HSTS_PRELOAD_MAX_AGE) {
      return outcome("hsts-preload-ready", `max-age=${parsed.maxAge} with includeSubDomains and preload.`, evidence);
    }
    const missing = [parsed.includeSubDomains ? null : "includeSubDomains", parsed.preload ? null : "preload"].filter((s) => s !== null);
    return outcome("hsts-ok", `max-age=${parsed.maxAge}${missing.length ? `; without ${missing.join(" and ")}` : ""}.`, evidence);
  },
});
