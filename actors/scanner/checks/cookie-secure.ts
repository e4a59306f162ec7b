import { defineCheck, outcome } from "../finding.js";
import { isSessionLike } from "../records/cookie.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { hstsProtects } from "./hsts.js";
import { allCookies, cookieEvidence } from "./support.js";

/**
 * Cookies without Secure are sent over plain HTTP, where anyone on the path reads them.
 * HSTS (six months or more) keeps the browser off plain HTTP for this host, so a missing
 * Secure then costs far less (the Observatory's rule); it still matters on the very first
 * visit and for any sibling host the cookie's Domain reaches.
 */
export const cookieSecure = defineCheck({
  id: "cookies:secure",
  group: "cookies",
  label: "Secure cookie flag",
  section: "web",
  results: {
    "cookies-secure": { status: "pass", summary: "Every cookie has the Secure flag." },
    "cookies-insecure-hsts": {
      status: "warn",
      summary: "Some cookies lack the Secure flag; HSTS keeps them off plain HTTP for this host.",
    },
    "cookies-insecure": { status: "warn", summary: "Some cookies lack the Secure flag." },
    "cookies-session-insecure-hsts": {
      status: "warn",
      summary: "A session cookie lacks the Secure flag; HSTS keeps it off plain HTTP for this host.",
    },
    "cookies-session-insecure": { status: "fail", summary: "A session cookie lacks the Secure flag and can leak over plain HTTP." },
    "cookies-none": { status: "info", summary: "No cookies are set." },
  },
  run(e: WebEvidence) {
    const cookies = allCookies(e);
    if (cookies.length === 0) return outcome("cookies-none", "Neither the HTTP nor the HTTPS chain sets cookies.");
    const insecure = cookies.filter((c) => !c.cookie.secure);
    const sessions = insecure.filter((c) => isSessionLike(c.cookie.name));
    const hsts = hstsProtects(e);
    const names = (list: typeof cookies) =>
      `Without Secure: ${list.map((c) => c.cookie.name).join(", ")}${hsts ? " (HSTS protects this host)" : ""}.`;
    if (sessions.length > 0)
      return outcome(hsts ? "cookies-session-insecure-hsts" : "cookies-session-insecure", names(sessions), cookieEvidence(sessions));
    if (insecure.length > 0) return outcome(hsts ? "cookies-insecure-hsts" : "cookies-insecure", names(insecure), cookieEvidence(insecure));
    return outcome("cookies-secure", `${cookies.length} cookie(s), all Secure.`, cookieEvidence(cookies));
  },
});
