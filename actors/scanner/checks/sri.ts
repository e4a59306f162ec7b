import { getDomain } from "tldts";
import { boundedLines, boundedList } from "../bounds.js";
import { defineCheck, outcome } from "../finding.js";
import { firstHeader } from "../records/headers.js";
import { examinedNote, looksLikeHtml, scriptTags } from "../records/html.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

/**
 * Subresource Integrity for scripts from other origins: without `integrity`, whoever
 * controls the other host (or the path to it, over http:) runs code in this page.
 */
export const sri = defineCheck({
  id: "content:sri",
  group: "content",
  label: "Subresource Integrity (SRI)",
  section: "web",
  results: {
    "sri-ok": { status: "pass", summary: "Every cross-origin script is loaded over HTTPS with an integrity hash." },
    "sri-same-origin": { status: "pass", summary: "The page loads no cross-origin scripts." },
    "sri-missing": { status: "warn", summary: "Cross-origin scripts are loaded without an integrity hash." },
    "sri-insecure-scripts": { status: "fail", summary: "Scripts are loaded over plain HTTP, where anyone on the path can replace them." },
    "sri-not-html": { status: "info", summary: "The response is not an HTML page." },
    "sri-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("sri-no-response", NO_RESPONSE_DETAIL);
    if (!looksLikeHtml(firstHeader(page, "content-type"), page.body)) return outcome("sri-not-html", `${page.url} is not HTML.`);
    const note = examinedNote(page);
    const base = new URL(page.url);
    const scripts = scriptTags(page.body).flatMap((tag) => {
      try {
        return [{ tag, url: new URL(tag.src, base) }];
      } catch {
        return [];
      }
    });
    const insecure = scripts.filter((s) => s.url.protocol === "http:" && base.protocol === "https:");
    if (insecure.length > 0)
      return outcome(
        "sri-insecure-scripts",
        `Over http: ${boundedList(insecure.map((s) => s.url.href))}.${note}`,
        boundedLines(insecure.map((s) => s.tag.tag)),
      );
    // As the Observatory: a script from the same registrable domain (cdn.example.com on www.example.com) is first-party.
    const site = (host: string) => getDomain(host, { allowPrivateDomains: true }) ?? host;
    const foreign = scripts.filter((s) => site(s.url.hostname) !== site(base.hostname));
    if (foreign.length === 0) return outcome("sri-same-origin", `${scripts.length} script(s), all from ${site(base.hostname)}.${note}`);
    const unprotected = foreign.filter((s) => !s.tag.integrity);
    if (unprotected.length > 0) {
      return outcome(
        "sri-missing",
        `Without integrity: ${boundedList(unprotected.map((s) => s.url.href))}.${note}`,
        boundedLines(unprotected.map((s) => s.tag.tag)),
      );
    }
    return outcome(
      "sri-ok",
      `${foreign.length} cross-origin script(s), all with integrity.${note}`,
      boundedLines(foreign.map((s) => s.tag.tag)),
    );
  },
});
