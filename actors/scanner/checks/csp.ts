import { defineCheck, outcome } from "../finding.js";
import { broadSources, type CspPolicy, effectiveSources, hasNonceOrHash, parseCspPolicies, scriptSources } from "../records/csp.js";
import { headerLine, headerValues } from "../records/headers.js";
import type { WebEvidence } from "../retrieve/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

const KNOWN_DIRECTIVES = new Set([
  "default-src", "script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem", "style-src-attr",
  "img-src", "connect-src", "font-src", "object-src", "media-src", "frame-src", "child-src", "worker-src",
  "manifest-src", "base-uri", "form-action", "frame-ancestors", "sandbox", "report-uri", "report-to",
  "upgrade-insecure-requests", "block-all-mixed-content", "require-trusted-types-for", "trusted-types",
  "fenced-frame-src", "webrtc",
]);

type PolicyVerdict = "csp-strict" | "csp-ok" | "csp-object-src-open" | "csp-unsafe-eval" | "csp-insecure-source" | "csp-unsafe-inline" | "csp-no-script-policy";
/** Best first: with several enforced policies the strictest one bounds what can run. */
const RANK: readonly PolicyVerdict[] = ["csp-strict", "csp-ok", "csp-object-src-open", "csp-unsafe-eval", "csp-insecure-source", "csp-unsafe-inline", "csp-no-script-policy"];

function judge(policy: CspPolicy): { verdict: PolicyVerdict; detail: string } {
  const script = scriptSources(policy);
  if (script === null) return { verdict: "csp-no-script-policy", detail: "Neither script-src nor default-src is set, so scripts are unrestricted." };
  const nonceOrHash = hasNonceOrHash(script);
  // CSP 2+: a nonce or hash disables 'unsafe-inline'; with 'strict-dynamic' host and scheme sources are ignored too.
  if (script.includes("'unsafe-inline'") && !nonceOrHash) return { verdict: "csp-unsafe-inline", detail: "script-src allows 'unsafe-inline': injected inline scripts run." };
  const broad = script.includes("'strict-dynamic'") && nonceOrHash ? [] : broadSources(script);
  if (broad.length > 0) return { verdict: "csp-insecure-source", detail: `script-src allows ${broad.join(" ")}: scripts from any host are accepted.` };
  if (script.includes("'unsafe-eval'")) return { verdict: "csp-unsafe-eval", detail: "script-src allows 'unsafe-eval': strings can be run as code." };
  const objects = effectiveSources(policy, "object-src", ["default-src"]);
  if (objects === null || broadSources(objects).length > 0) {
    return { verdict: "csp-object-src-open", detail: objects === null ? "object-src is not restricted; set object-src 'none'." : `object-src allows ${broadSources(objects).join(" ")}.` };
  }
  if (policy.get("default-src")?.join(" ") === "'none'") return { verdict: "csp-strict", detail: "default-src 'none' with no unsafe script sources." };
  return { verdict: "csp-ok", detail: "Scripts are restricted without unsafe sources." };
}

/** Content-Security-Policy judged on the page, in the spirit of Observatory's CSP test. */
export const csp = defineCheck({
  id: "headers:csp",
  group: "headers",
  label: "Content Security Policy (CSP)",
  section: "web",
  results: {
    "csp-strict": { status: "pass", summary: "A strict CSP: everything denied by default, no unsafe script sources." },
    "csp-ok": { status: "pass", summary: "CSP restricts scripts without unsafe sources." },
    "csp-object-src-open": { status: "warn", summary: "CSP leaves object-src open (plugins and embedded objects)." },
    "csp-unsafe-eval": { status: "warn", summary: "CSP allows 'unsafe-eval' in scripts." },
    "csp-insecure-source": { status: "fail", summary: "CSP allows scripts from any host or scheme (*, https:, data:)." },
    "csp-unsafe-inline": { status: "fail", summary: "CSP allows 'unsafe-inline' scripts, which defeats its XSS protection." },
    "csp-no-script-policy": { status: "fail", summary: "CSP does not restrict scripts (no script-src or default-src)." },
    "csp-report-only": { status: "fail", summary: "CSP is only in report-only mode: nothing is blocked." },
    "csp-invalid": { status: "fail", summary: "The CSP header cannot be parsed into known directives." },
    "csp-missing": { status: "fail", summary: "No Content-Security-Policy header." },
    "csp-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("csp-no-response", NO_RESPONSE_DETAIL);
    const values = headerValues(page, "content-security-policy");
    if (values.length === 0) {
      const reportOnly = headerValues(page, "content-security-policy-report-only");
      if (reportOnly.length > 0) return outcome("csp-report-only", "Only Content-Security-Policy-Report-Only is sent.", headerLine("content-security-policy-report-only", reportOnly[0]));
      return outcome("csp-missing", `${page.url} sends no Content-Security-Policy header.`);
    }
    const evidence = values.map((v) => headerLine("content-security-policy", v)).join("\n");
    const policies = parseCspPolicies(values).filter((p) => [...p.keys()].some((d) => KNOWN_DIRECTIVES.has(d)));
    if (policies.length === 0) return outcome("csp-invalid", "No known directive in the policy.", evidence);
    const judged = policies.map(judge).sort((a, b) => RANK.indexOf(a.verdict) - RANK.indexOf(b.verdict));
    return outcome(judged[0].verdict, judged[0].detail, evidence);
  },
});
