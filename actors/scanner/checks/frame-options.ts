import { defineCheck, outcome } from "../finding.js";
import { broadSources, parseCspPolicies } from "../records/csp.js";
import { headerLine, headerValues } from "../records/headers.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

/** Clickjacking: CSP frame-ancestors (preferred, it overrides X-Frame-Options) or X-Frame-Options. */
export const frameOptions = defineCheck({
  id: "headers:frame-options",
  group: "headers",
  label: "Clickjacking protection (frame-ancestors, X-Frame-Options)",
  section: "web",
  results: {
    "frame-ancestors": { status: "pass", summary: "CSP frame-ancestors limits which sites may frame the page." },
    "xfo-ok": { status: "pass", summary: "X-Frame-Options forbids framing by other sites." },
    "frame-ancestors-open": { status: "fail", summary: "CSP frame-ancestors lets any site frame the page." },
    "xfo-invalid": {
      status: "fail",
      summary: "X-Frame-Options has a value browsers ignore (ALLOW-FROM is obsolete; conflicting values cancel out).",
    },
    "frame-missing": { status: "fail", summary: "Neither frame-ancestors nor X-Frame-Options: any site can frame the page." },
    "frame-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("frame-no-response", NO_RESPONSE_DETAIL);
    const ancestors = parseCspPolicies(headerValues(page, "content-security-policy")).flatMap((p) => {
      const sources = p.get("frame-ancestors");
      return sources ? [sources] : [];
    });
    if (ancestors.length > 0) {
      const line = headerLine("content-security-policy", `frame-ancestors ${ancestors[0].join(" ")}`);
      // Every enforced policy applies, so one restrictive frame-ancestors is enough.
      const restrictive = ancestors.find((sources) => broadSources(sources).length === 0);
      if (restrictive)
        return outcome(
          "frame-ancestors",
          `frame-ancestors ${restrictive.join(" ") || "(empty = 'none')"}.`,
          headerLine("content-security-policy", `frame-ancestors ${restrictive.join(" ")}`),
        );
      return outcome("frame-ancestors-open", `frame-ancestors allows ${broadSources(ancestors[0]).join(" ")}.`, line);
    }
    const lines = headerValues(page, "x-frame-options");
    if (lines.length === 0) return outcome("frame-missing", `${page.url} sends neither header.`);
    const xfo = lines.join(", ");
    const evidence = lines.map((v) => headerLine("x-frame-options", v)).join("\n");
    // HTML 7.1.8: the header is a list; more than one distinct value means no restriction at all.
    const values = new Set(
      xfo
        .split(",")
        .map((v) => v.trim().toUpperCase())
        .filter((v) => v !== ""),
    );
    if (values.size > 1)
      return outcome("xfo-invalid", `Conflicting values (${[...values].join(", ")}): browsers then apply none.`, evidence);
    const [value] = values;
    if (value === "DENY" || value === "SAMEORIGIN") return outcome("xfo-ok", `X-Frame-Options: ${value}.`, evidence);
    return outcome("xfo-invalid", `"${xfo}" is not DENY or SAMEORIGIN.`, evidence);
  },
});
