import { defineCheck, outcome } from "../finding.js";
import { firstHeader, headerLine } from "../records/headers.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

/** Cross-Origin-Resource-Policy stops other sites embedding the response (Spectre-class leaks). */
export const corp = defineCheck({
  id: "headers:corp",
  group: "headers",
  label: "Cross-Origin-Resource-Policy",
  section: "web",
  results: {
    "corp-ok": { status: "pass", summary: "Cross-Origin-Resource-Policy limits embedding to the same site or origin." },
    "corp-cross-origin": { status: "info", summary: "Cross-Origin-Resource-Policy explicitly allows any site to embed the response." },
    "corp-invalid": { status: "warn", summary: "Cross-Origin-Resource-Policy has an unknown value and is ignored." },
    "corp-missing": { status: "info", summary: "No Cross-Origin-Resource-Policy header." },
    "corp-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("corp-no-response", NO_RESPONSE_DETAIL);
    const value = firstHeader(page, "cross-origin-resource-policy");
    if (value === null) return outcome("corp-missing", "Consider same-origin or same-site for pages and private resources.");
    const evidence = headerLine("cross-origin-resource-policy", value);
    const v = value.trim().toLowerCase();
    if (v === "same-origin" || v === "same-site") return outcome("corp-ok", `Set to ${v}.`, evidence);
    if (v === "cross-origin") return outcome("corp-cross-origin", "Fine for public assets; pages rarely need it.", evidence);
    return outcome("corp-invalid", `"${value}" is not same-origin, same-site or cross-origin.`, evidence);
  },
});
