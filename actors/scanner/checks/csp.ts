import { defineCheck, outcome } from "../finding.js";
import { broadSources, type CspPolicy, effectiveSources, hasNonceOrHash, parseCspPolicies, scriptSources } from "../records/csp.js";
import { firstHeader, headerLine, headerValues } from "../records/headers.js";
import { examinedNote, looksLikeHtml, metaCsp } from "../records/html.js";
import type { HttpExchange, WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

const KNOWN_DIRECTIVES = new Set([
  "default-src",
  "script-src",
  "script-src-elem",
  "script-src-attr",
  "style-src",
  "style-src-elem",
  "style-src-attr",
  "img-src",
  "connect-src",
  "font-src",
  "object-src",
  "media-src",
  "frame-src",
  "child-src",
  "worker-src",
  "manifest-src",
  "base-uri",
  "form-action",
  "frame-ancestors",
  "sandbox",
  "report-uri",
  "report-to",
  "upgrade-insecure-requests",
  "block-all-mixed-content",
  "require-trusted-types-for",
  "trusted-types",
  "fenced-frame-src",
  "webrtc",
]);
/** CSP 3 4.3: a policy in `<meta>` cannot carry these; browsers drop them. */
const NOT_IN_META = ["frame-ancestors", "report-uri", "sandbox"];
/** Passive content (Observatory's split): an http: image is a smaller hole than an http: script. */
const PASSIVE = new Set(["img-src", "media-src"]);

type PolicyVerdict =
  | "csp-strict"
  | "csp-ok"
  | "csp-unsafe-style"
  | "csp-insecure-passive"
  | "csp-unsafe-eval"
  | "csp-insecure-scheme"
  | "csp-object-src-open"
  | "csp-insecure-source"
  | "csp-unsafe-inline"
  | "csp-no-script-policy";
/** Best first: with several enforced policies the strictest one bounds what can run. */
const RANK: readonly PolicyVerdict[] = [
  "csp-strict",
  "csp-ok",
  "csp-unsafe-style",
  "csp-insecure-passive",
  "csp-unsafe-eval",
  "csp-insecure-scheme",
  "csp-object-src-open",
  "csp-insecure-source",
  "csp-unsafe-inline",
  "csp-no-script-policy",
];

const insecureScheme = (source: string) => /^(http|ftp):/i.test(source);

/** Script sources as a browser applies them: a nonce or hash disables 'unsafe-inline'; with 'strict-dynamic' hosts and schemes too. */
function effectiveScript(script: readonly string[]): readonly string[] {
  if (!hasNonceOrHash(script)) return script;
  if (script.includes("'strict-dynamic'"))
    return script.filter(
      (s) => s !== "'unsafe-inline'" && s !== "'self'" && broadSources([s]).length === 0 && !/^[a-z][a-z0-9+.-]*:\/\//i.test(s),
    );
  return script.filter((s) => s !== "'unsafe-inline'");
}

/** One policy judged in the order of Observatory's CSP test: the first problem found names the result. */
function judge(policy: CspPolicy, secure: boolean): { verdict: PolicyVerdict; detail: string } {
  const declared = scriptSources(policy);
  if (declared === null)
    return { verdict: "csp-no-script-policy", detail: "Neither script-src nor default-src is set, so scripts are unrestricted." };
  const script = effectiveScript(declared);
  if (script.includes("'unsafe-inline'"))
    return { verdict: "csp-unsafe-inline", detail: "script-src allows 'unsafe-inline': injected inline scripts run." };
  const broad = broadSources(script);
  if (broad.length > 0)
    return { verdict: "csp-insecure-source", detail: `script-src allows ${broad.join(" ")}: scripts from any host are accepted.` };
  const objects = effectiveSources(policy, "object-src", ["default-src"]);
  if (objects === null || broadSources(objects).length > 0) {
    return {
      verdict: "csp-object-src-open",
      detail:
        objects === null
          ? "object-src is not restricted (no object-src or default-src); set object-src 'none'."
          : `object-src allows ${broadSources(objects).join(" ")}.`,
    };
  }
  const active = [...policy.entries()]
    .filter(([d]) => !PASSIVE.has(d) && d !== "script-src")
    .flatMap(([, s]) => s)
    .concat(script);
  if (secure && active.some(insecureScheme))
    return {
      verdict: "csp-insecure-scheme",
      detail: `The policy allows active content over plain HTTP: ${active.filter(insecureScheme).join(" ")}.`,
    };
  const style = effectiveSources(policy, "style-src", ["default-src"]) ?? ["*"];
  if (script.includes("'unsafe-eval'") || style.includes("'unsafe-eval'"))
    return { verdict: "csp-unsafe-eval", detail: "The policy allows 'unsafe-eval': strings can be run as code." };
  const passive = [...PASSIVE].flatMap((d) => effectiveSources(policy, d, ["default-src"]) ?? []);
  if (secure && passive.some(insecureScheme))
    return {
      verdict: "csp-insecure-passive",
      detail: `Images or media may load over plain HTTP: ${passive.filter(insecureScheme).join(" ")}.`,
    };
  const styleUnsafe = effectiveScript(style).filter((s) => s === "'unsafe-inline'" || broadSources([s]).length > 0);
  if (styleUnsafe.length > 0)
    return { verdict: "csp-unsafe-style", detail: `Scripts are locked down, but style-src allows ${styleUnsafe.join(" ")}.` };
  if (policy.get("default-src")?.join(" ") === "'none'")
    return { verdict: "csp-strict", detail: "default-src 'none' with no unsafe sources." };
  return { verdict: "csp-ok", detail: "Scripts, objects and styles are restricted without unsafe sources." };
}

function withoutMetaOnly(policy: CspPolicy): CspPolicy {
  return new Map([...policy].filter(([d]) => !NOT_IN_META.includes(d)));
}

/** The page's policies: every header value and, on an HTML page, every `<meta http-equiv>` one. */
function policiesOf(page: HttpExchange): { headers: string[]; metas: string[]; policies: CspPolicy[]; note: string } {
  const headers = headerValues(page, "content-security-policy");
  const html = looksLikeHtml(firstHeader(page, "content-type"), page.body);
  const metas = html ? metaCsp(page.body) : [];
  const known = (p: CspPolicy) => [...p.keys()].some((d) => KNOWN_DIRECTIVES.has(d));
  const policies = [...parseCspPolicies(headers), ...parseCspPolicies(metas).map(withoutMetaOnly)].filter(known);
  return { headers, metas, policies, note: html ? examinedNote(page) : "" };
}

/**
 * Content-Security-Policy judged on the page, header and `<meta>` alike, with the order
 * and buckets of Observatory's CSP test (docs/scan.md lists where and why we differ).
 */
export const csp = defineCheck({
  id: "headers:csp",
  group: "headers",
  label: "Content Security Policy (CSP)",
  section: "web",
  results: {
    "csp-strict": { status: "pass", summary: "A strict CSP: everything denied by default, no unsafe sources." },
    "csp-ok": { status: "pass", summary: "CSP restricts scripts, objects and styles without unsafe sources." },
    "csp-unsafe-style": {
      status: "pass",
      summary: "CSP locks scripts down but allows unsafe style sources ('unsafe-inline', broad hosts).",
    },
    "csp-insecure-passive": { status: "warn", summary: "CSP lets images or media load over plain HTTP." },
    "csp-unsafe-eval": { status: "warn", summary: "CSP allows 'unsafe-eval'." },
    "csp-insecure-scheme": { status: "fail", summary: "CSP lets scripts or other active content load over plain HTTP." },
    "csp-object-src-open": { status: "fail", summary: "CSP leaves object-src open (plugins and embedded objects can run script)." },
    "csp-insecure-source": { status: "fail", summary: "CSP allows scripts from any host or scheme (*, https:, data:)." },
    "csp-unsafe-inline": { status: "fail", summary: "CSP allows 'unsafe-inline' scripts, which defeats its XSS protection." },
    "csp-no-script-policy": { status: "fail", summary: "CSP does not restrict scripts (no script-src or default-src)." },
    "csp-report-only": { status: "fail", summary: "CSP is only in report-only mode: nothing is blocked." },
    "csp-invalid": { status: "fail", summary: "The CSP cannot be parsed into known directives." },
    "csp-missing": { status: "fail", summary: "No Content-Security-Policy header or <meta> policy." },
    "csp-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("csp-no-response", NO_RESPONSE_DETAIL);
    const { headers, metas, policies, note } = policiesOf(page);
    if (headers.length === 0 && metas.length === 0) {
      const reportOnly = headerValues(page, "content-security-policy-report-only");
      if (reportOnly.length > 0)
        return outcome(
          "csp-report-only",
          `Only Content-Security-Policy-Report-Only is sent.${note}`,
          headerLine("content-security-policy-report-only", reportOnly[0]),
        );
      return outcome("csp-missing", `${page.url} sends no Content-Security-Policy header or <meta> policy.${note}`);
    }
    const evidence = [
      ...headers.map((v) => headerLine("content-security-policy", v)),
      ...metas.map((v) => `<meta http-equiv="Content-Security-Policy" content="${v}">`),
    ].join("\n");
    if (policies.length === 0) return outcome("csp-invalid", `No known directive in the policy.${note}`, evidence);
    const secure = page.url.startsWith("https:");
    const judged = policies.map((p) => judge(p, secure)).sort((a, b) => RANK.indexOf(a.verdict) - RANK.indexOf(b.verdict));
    return outcome(judged[0].verdict, `${judged[0].detail}${note}`, evidence);
  },
});
