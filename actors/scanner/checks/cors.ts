import { defineCheck, outcome } from "../finding.js";
import { firstHeader, headerLine } from "../records/headers.js";
import { CORS_PROBE_ORIGIN, type WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";

/**
 * The answer to a request from a foreign Origin. Reflecting that origin with
 * credentials lets any site read the page as the logged-in visitor.
 */
export const cors = defineCheck({
  id: "headers:cors",
  group: "headers",
  label: "Cross-origin resource sharing (CORS)",
  section: "web",
  results: {
    "cors-none": { status: "pass", summary: "Foreign origins are not granted access." },
    "cors-public": { status: "info", summary: "Any origin may read the page, without credentials (Access-Control-Allow-Origin: *)." },
    "cors-reflected": { status: "warn", summary: "Any origin that asks is granted access (the Origin is reflected), without credentials." },
    "cors-wildcard-credentials": { status: "fail", summary: "Access-Control-Allow-Origin: * is combined with Allow-Credentials: true." },
    "cors-reflected-credentials": {
      status: "fail",
      summary: "Any origin is granted credentialed access: other sites can read pages as the logged-in user.",
    },
    "cors-not-probed": { status: "info", summary: "The CORS probe got no response." },
  },
  run(e: WebEvidence) {
    const probe = e.cors;
    if (!probe || probe.status === null) return outcome("cors-not-probed", probe?.error ?? "No HTTPS page to probe.");
    const origin = firstHeader(probe, "access-control-allow-origin");
    const credentials = (firstHeader(probe, "access-control-allow-credentials") ?? "").trim().toLowerCase() === "true";
    const lines = [`GET ${probe.url} with origin: ${CORS_PROBE_ORIGIN}`];
    if (origin !== null) lines.push(headerLine("access-control-allow-origin", origin));
    if (credentials) lines.push(headerLine("access-control-allow-credentials", "true"));
    const evidence = lines.join("\n");
    const value = origin?.trim() ?? null;
    if (value === null) return outcome("cors-none", "No Access-Control-Allow-Origin in the answer.", evidence);
    // "null" is granted to sandboxed frames and data: URLs, which any site can create.
    if (value === CORS_PROBE_ORIGIN || value === "null") {
      return credentials
        ? outcome("cors-reflected-credentials", `${value} was allowed with credentials; allow-list trusted origins instead.`, evidence)
        : outcome("cors-reflected", `${value} was allowed; allow-list trusted origins instead.`, evidence);
    }
    if (value === "*") {
      return credentials
        ? outcome(
            "cors-wildcard-credentials",
            "Browsers refuse credentialed reads with *, but the pair shows credentials are meant to be shared cross-origin; allow-list trusted origins.",
            evidence,
          )
        : outcome("cors-public", "Fine for public content only.", evidence);
    }
    return outcome("cors-none", `Only ${value} is allowed.`, evidence);
  },
});
