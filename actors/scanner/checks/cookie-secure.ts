import { defineCheck, outcome } from "../finding.js";
import { isSessionLike } from "../records/cookie.js";
import type { WebEvidence } from "../retrieve/evidence.js";
import { allCookies, cookieEvidence } from "./support.js";

/** Cookies without Secure are sent over plain HTTP, where anyone on the path reads them. */
export const cookieSecure = defineCheck({
  id: "cookies:secure",
  group: "cookies",
  label: "Secure cookie flag",
  section: "web",
  results: {
    "cookies-secure": { status: "pass", summary: "Every cookie has the Secure flag." },
    "cookies-insecure": { status: "warn", summary: "Some cookies lack the Secure flag." },
    "cookies-session-insecure": { status: "fail", summary: "A session cookie lacks the Secure flag and can leak over plain HTTP." },
    "cookies-none": { status: "info", summary: "No cookies are set." },
  },
  run(e: WebEvidence) {
    const cookies = allCookies(e);
    if (cookies.length === 0) return outcome("cookies-none", "Neither the HTTP nor the HTTPS chain sets cookies.");
    const insecure = cookies.filter((c) => !c.cookie.secure);
    const sessions = insecure.filter((c) => isSessionLike(c.cookie.name));
    if (sessions.length > 0) return outcome("cookies-session-insecure", `Without Secure: ${sessions.map((c) => c.cookie.name).join(", ")}.`, cookieEvidence(sessions));
    if (insecure.length > 0) return outcome("cookies-insecure", `Without Secure: ${insecure.map((c) => c.cookie.name).join(", ")}.`, cookieEvidence(insecure));
    return outcome("cookies-secure", `${cookies.length} cookie(s), all Secure.`, cookieEvidence(cookies));
  },
});
