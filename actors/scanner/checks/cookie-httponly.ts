import { defineCheck, outcome } from "../finding.js";
import { isSessionLike } from "../records/cookie.js";
import type { WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { allCookies, cookieEvidence } from "./support.js";

/** CSRF tokens are meant to be read by the page's script (double submit), so they are exempt. */
const SCRIPT_READABLE = /csrf|xsrf/i;

/** HttpOnly keeps session cookies out of reach of injected script. */
export const cookieHttpOnly = defineCheck({
  id: "cookies:httponly",
  group: "cookies",
  label: "HttpOnly on session cookies",
  section: "web",
  results: {
    "httponly-ok": { status: "pass", summary: "Session cookies have the HttpOnly flag." },
    "httponly-missing": { status: "fail", summary: "A session cookie lacks HttpOnly: injected script can steal it." },
    "httponly-not-applicable": { status: "info", summary: "No session-like cookies are set." },
  },
  run(e: WebEvidence) {
    const sessions = allCookies(e).filter((c) => isSessionLike(c.cookie.name) && !SCRIPT_READABLE.test(c.cookie.name));
    if (sessions.length === 0) return outcome("httponly-not-applicable", "No cookie name looks like a session or credential.");
    const exposed = sessions.filter((c) => !c.cookie.httpOnly);
    if (exposed.length > 0)
      return outcome("httponly-missing", `Without HttpOnly: ${exposed.map((c) => c.cookie.name).join(", ")}.`, cookieEvidence(exposed));
    return outcome("httponly-ok", `${sessions.map((c) => c.cookie.name).join(", ")}: HttpOnly.`, cookieEvidence(sessions));
  },
});
