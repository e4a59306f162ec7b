import { boundedList } from "../bounds.js";
import { defineCheck, outcome } from "../finding.js";
import { effectiveReferrerPolicy, firstHeader, headerLine, headerValues } from "../records/headers.js";
import { examinedNote, looksLikeHtml, metaReferrer } from "../records/html.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

const PRIVATE = new Set(["no-referrer", "same-origin", "strict-origin", "strict-origin-when-cross-origin"]);
const UNSAFE = new Set(["unsafe-url", "no-referrer-when-downgrade"]);

/** Whether full URLs (paths, query tokens) leak to other sites in the Referer header. */
export const referrerPolicy = defineCheck({
  id: "headers:referrer-policy",
  group: "headers",
  label: "Referrer-Policy",
  section: "web",
  results: {
    "referrer-private": { status: "pass", summary: "Referrer-Policy keeps paths and queries from other sites." },
    "referrer-ok": { status: "warn", summary: "Referrer-Policy sends the origin to every site, plain-HTTP ones included." },
    "referrer-unsafe": { status: "fail", summary: "Referrer-Policy sends full URLs to other sites." },
    "referrer-invalid": { status: "fail", summary: "Referrer-Policy has no value browsers recognise." },
    "referrer-missing": { status: "info", summary: "No Referrer-Policy; browsers default to strict-origin-when-cross-origin." },
    "referrer-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("referrer-no-response", NO_RESPONSE_DETAIL);
    const headers = headerValues(page, "referrer-policy");
    const html = looksLikeHtml(firstHeader(page, "content-type"), page.body);
    const metas = html ? metaReferrer(page.body) : [];
    const note = html ? examinedNote(page) : "";
    // The <meta> policy is applied after the header, so its last known token wins.
    const values = [...headers, ...metas];
    if (values.length === 0) return outcome("referrer-missing", `Set Referrer-Policy explicitly so older browsers behave the same.${note}`);
    const evidence = [
      ...headers.map((v) => headerLine("referrer-policy", v)),
      ...metas.map((v) => `<meta name="referrer" content="${v}">`),
    ].join("\n");
    const policy = effectiveReferrerPolicy(values);
    if (policy === null)
      return outcome("referrer-invalid", `No known policy in ${boundedList(values.map((v) => `"${v}"`))}.${note}`, evidence);
    if (UNSAFE.has(policy))
      return outcome("referrer-unsafe", `${policy} leaks full URLs; use strict-origin-when-cross-origin or stricter.${note}`, evidence);
    if (PRIVATE.has(policy)) return outcome("referrer-private", `Effective policy: ${policy}.${note}`, evidence);
    return outcome("referrer-ok", `Effective policy: ${policy}.${note}`, evidence);
  },
});
