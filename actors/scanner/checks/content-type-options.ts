import { defineCheck, outcome } from "../finding.js";
import { firstHeader, headerLine } from "../records/headers.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

/** `nosniff` stops browsers from running a response as script or style against its declared type. */
export const contentTypeOptions = defineCheck({
  id: "headers:content-type-options",
  group: "headers",
  label: "X-Content-Type-Options",
  section: "web",
  results: {
    "nosniff-ok": { status: "pass", summary: "X-Content-Type-Options: nosniff is set." },
    "nosniff-invalid": { status: "fail", summary: "X-Content-Type-Options has a value other than nosniff." },
    "nosniff-missing": { status: "fail", summary: "X-Content-Type-Options: nosniff is missing." },
    "nosniff-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("nosniff-no-response", NO_RESPONSE_DETAIL);
    const value = firstHeader(page, "x-content-type-options");
    if (value === null) return outcome("nosniff-missing", `${page.url} sends no X-Content-Type-Options header.`);
    const evidence = headerLine("x-content-type-options", value);
    if (value.trim().toLowerCase() !== "nosniff") return outcome("nosniff-invalid", `"${value}" is not nosniff.`, evidence);
    return outcome("nosniff-ok", "MIME sniffing is off.", evidence);
  },
});
