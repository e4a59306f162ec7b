import { defineCheck, outcome } from "../finding.js";
import type { ParsedCookie } from "../records/cookie.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { allCookies, cookieEvidence } from "./support.js";

/** RFC 6265bis 4.1.3: `__Secure-` needs Secure; `__Host-` needs Secure, Path=/ and no Domain. */
export function prefixViolation(cookie: ParsedCookie): string | null {
  if (cookie.name.startsWith("__Secure-") && !cookie.secure) return "__Secure- without Secure";
  if (cookie.name.startsWith("__Host-")) {
    if (!cookie.secure) return "__Host- without Secure";
    if (cookie.path !== "/") return "__Host- without Path=/";
    if (cookie.domain !== null) return "__Host- with a Domain attribute";
  }
  return null;
}

export const cookiePrefix = defineCheck({
  id: "cookies:prefix",
  group: "cookies",
  label: "Cookie name prefixes",
  section: "web",
  results: {
    "prefix-ok": { status: "pass", summary: "Prefixed cookies (__Host-, __Secure-) meet their prefix rules." },
    "prefix-violation": { status: "fail", summary: "A prefixed cookie breaks its prefix rules, so browsers reject it." },
    "prefix-unused": { status: "info", summary: "No cookie uses the __Host- or __Secure- prefix." },
  },
  run(e: WebEvidence) {
    const prefixed = allCookies(e).filter((c) => /^__(Host|Secure)-/.test(c.cookie.name));
    if (prefixed.length === 0)
      return outcome("prefix-unused", "__Host- names lock a cookie to this host over HTTPS; consider it for session cookies.");
    const broken = prefixed.flatMap((c) => {
      const why = prefixViolation(c.cookie);
      return why ? [{ c, why }] : [];
    });
    if (broken.length > 0)
      return outcome(
        "prefix-violation",
        broken.map((b) => `${b.c.cookie.name}: ${b.why}`).join("; "),
        cookieEvidence(broken.map((b) => b.c)),
      );
    return outcome("prefix-ok", `${prefixed.map((c) => c.cookie.name).join(", ")} follow the rules.`, cookieEvidence(prefixed));
  },
});
