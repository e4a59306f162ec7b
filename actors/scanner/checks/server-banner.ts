import { defineCheck, outcome } from "../finding.js";
import { headerLine, headerValues } from "../records/headers.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { NO_RESPONSE_DETAIL, primaryResponse } from "./support.js";

const BANNERS = ["server", "x-powered-by", "x-aspnet-version", "x-aspnetmvc-version", "x-generator"] as const;
/** A version number: `Apache/2.2.3`, `PHP/5.2.17`, `4.0.30319`. */
const VERSION = /\d+\.\d+|\/\s*\d/;

/** Exact product versions tell an attacker which known vulnerabilities to try. */
export const serverBanner = defineCheck({
  id: "headers:server-banner",
  group: "headers",
  label: "Server version disclosure",
  section: "web",
  results: {
    "banner-ok": { status: "pass", summary: "Response headers do not disclose software versions." },
    "banner-version": { status: "warn", summary: "Response headers disclose software versions." },
    "banner-no-response": { status: "info", summary: "No response to judge." },
  },
  run(e: WebEvidence) {
    const page = primaryResponse(e);
    if (!page) return outcome("banner-no-response", NO_RESPONSE_DETAIL);
    const lines = BANNERS.flatMap((name) => headerValues(page, name).map((value) => ({ name, value })));
    const leaking = lines.filter((l) => VERSION.test(l.value));
    if (leaking.length > 0) {
      return outcome(
        "banner-version",
        `Remove or genericise ${leaking.map((l) => l.name).join(", ")}.`,
        leaking.map((l) => headerLine(l.name, l.value)).join("\n"),
      );
    }
    return outcome(
      "banner-ok",
      lines.length > 0 ? "Product names only, no versions." : "No banner headers.",
      lines.map((l) => headerLine(l.name, l.value)).join("\n"),
    );
  },
});
