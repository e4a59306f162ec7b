import { defineCheck, outcome } from "../finding.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { allCookies, cookieEvidence } from "./support.js";

/** SameSite limits cross-site sending (CSRF). `None` is only accepted by browsers with Secure. */
export const cookieSameSite = defineCheck({
  id: "cookies:samesite",
  group: "cookies",
  label: "SameSite cookie attribute",
  section: "web",
  results: {
    "samesite-ok": { status: "pass", summary: "Every cookie is SameSite=Lax or Strict." },
    "samesite-cross-site": { status: "pass", summary: "Cookies set SameSite; some are deliberately cross-site (None; Secure)." },
    "samesite-missing": { status: "warn", summary: "Some cookies have no SameSite attribute (browsers default to Lax)." },
    "samesite-csrf-missing": { status: "fail", summary: "An anti-CSRF cookie has no SameSite attribute." },
    "samesite-none-insecure": { status: "fail", summary: "SameSite=None without Secure: browsers reject the cookie." },
    "samesite-invalid": { status: "fail", summary: "A SameSite value is not Strict, Lax or None." },
    "samesite-not-applicable": { status: "info", summary: "No cookies are set." },
  },
  run(e: WebEvidence) {
    const cookies = allCookies(e);
    if (cookies.length === 0) return outcome("samesite-not-applicable", "Neither chain sets cookies.");
    const invalid = cookies.filter((c) => c.cookie.sameSite !== null && !["strict", "lax", "none"].includes(c.cookie.sameSite));
    if (invalid.length > 0)
      return outcome("samesite-invalid", `Unknown SameSite on ${invalid.map((c) => c.cookie.name).join(", ")}.`, cookieEvidence(invalid));
    const noneInsecure = cookies.filter((c) => c.cookie.sameSite === "none" && !c.cookie.secure);
    if (noneInsecure.length > 0)
      return outcome(
        "samesite-none-insecure",
        `SameSite=None without Secure: ${noneInsecure.map((c) => c.cookie.name).join(", ")}.`,
        cookieEvidence(noneInsecure),
      );
    const missing = cookies.filter((c) => c.cookie.sameSite === null);
    // The Observatory's rule: a CSRF token is exactly the cookie SameSite should guard.
    const csrf = missing.filter((c) => /csrf/i.test(c.cookie.name));
    if (csrf.length > 0)
      return outcome("samesite-csrf-missing", `No SameSite on ${csrf.map((c) => c.cookie.name).join(", ")}.`, cookieEvidence(csrf));
    if (missing.length > 0)
      return outcome(
        "samesite-missing",
        `No SameSite on ${missing.map((c) => c.cookie.name).join(", ")}; set Lax or Strict.`,
        cookieEvidence(missing),
      );
    const crossSite = cookies.filter((c) => c.cookie.sameSite === "none");
    if (crossSite.length > 0)
      return outcome(
        "samesite-cross-site",
        `SameSite=None on ${crossSite.map((c) => c.cookie.name).join(", ")}.`,
        cookieEvidence(crossSite),
      );
    return outcome("samesite-ok", `${cookies.length} cookie(s), all Lax or Strict.`, cookieEvidence(cookies));
  },
});
