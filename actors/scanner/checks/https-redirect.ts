import { defineCheck, outcome } from "../finding.js";
import type { HttpExchange, WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";

function hopLine(hop: HttpExchange): string {
  if (hop.status === null) return `GET ${hop.url} -> ${hop.error ?? "no response"}`;
  const location = hop.headers.find(([n]) => n === "location")?.[1];
  return `GET ${hop.url} -> ${hop.status}${location ? ` location: ${location}` : ""}`;
}

export function chainEvidence(hops: readonly HttpExchange[]): string {
  return hops.map(hopLine).join("\n");
}

/**
 * http:// must send visitors to https:// on the same host at once, so the first hop
 * already lands on TLS and HSTS can be set for this host (Observatory's redirection test).
 */
export const httpsRedirect = defineCheck({
  id: "tls:https-redirect",
  group: "tls",
  label: "Redirect from HTTP to HTTPS",
  section: "web",
  results: {
    "redirect-ok": { status: "pass", summary: "http:// redirects straight to https:// on the same host." },
    "redirect-off-host": {
      status: "warn",
      summary: "http:// redirects to https:// on another host first, so HSTS is not set for this host.",
    },
    "redirect-not-initial": { status: "warn", summary: "http:// reaches https:// only after an intermediate plain-HTTP redirect." },
    "redirect-not-to-https": { status: "fail", summary: "http:// redirects, but never to https://." },
    "redirect-missing": { status: "fail", summary: "http:// serves the site without redirecting to https://." },
    "redirect-invalid": { status: "fail", summary: "The redirect chain from http:// loops, is too long or breaks." },
    "redirect-no-http": { status: "info", summary: "Nothing answers on http://, so there is nothing to redirect." },
  },
  run(e: WebEvidence) {
    const { hops, outcome: end } = e.http;
    const evidence = chainEvidence(hops);
    const first = hops[0];
    if (!first || first.status === null) {
      return outcome("redirect-no-http", first?.error ? `http://${e.domain}/: ${first.error}.` : "http:// was not tried.", evidence);
    }
    if (end === "loop") return outcome("redirect-invalid", "The redirects come back to a URL already visited.", evidence);
    if (end === "too-many-redirects") return outcome("redirect-invalid", `More than ${hops.length - 1} redirects.`, evidence);
    if (end === "error")
      return outcome("redirect-invalid", `The chain breaks at ${hops.at(-1)?.url}: ${hops.at(-1)?.error ?? "no response"}.`, evidence);
    if (hops.length === 1) return outcome("redirect-missing", `http://${e.domain}/ answers ${first.status} without a redirect.`, evidence);
    const final = hops[hops.length - 1];
    if (!final.url.startsWith("https:")) return outcome("redirect-not-to-https", `The chain ends at ${final.url}.`, evidence);
    const second = new URL(hops[1].url);
    if (second.protocol !== "https:")
      return outcome("redirect-not-initial", `The first redirect goes to ${second.href}, still plain HTTP.`, evidence);
    if (second.hostname !== e.domain)
      return outcome(
        "redirect-off-host",
        `The first redirect leaves for ${second.hostname}; redirect to https://${e.domain}/ first.`,
        evidence,
      );
    return outcome("redirect-ok", `http://${e.domain}/ -> ${second.href}.`, evidence);
  },
});
