import { pageScriptLoader, type PageScript } from "../../shared/embed/asset.js";
import type { IngressDeps } from "../deps.js";
import type { Handler } from "../router.js";
import { fault } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";

/**
 * The sign-in and invitation pages (docs/accounts-members.md): plain, accessible HTML whose
 * one script (shared/embed/signin/, built by ops/embed/build.ts) talks to
 * /admin/v1/auth/. Served under a strict Content-Security-Policy: scripts and requests only
 * to this origin, no inline script or style, no framing, no form posts elsewhere. They are the
 * members' way into the dashboard (docs/dashboard.md, "Getting in"): a sign-in sends the
 * member on to /dashboard (or the dashboard address of `?next=`), where the SPA resumes the
 * session. These exact routes are matched before the SPA shell's patterns.
 */

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
} as const;

function layout(page: "signin" | "invitation", title: string, script: PageScript, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Access gateway</title>
<script src="/dashboard/assets/signin.js?v=${script.version}" defer></script>
</head>
<body data-page="${page}" data-state="loading">
<main>
<h1>${title}</h1>
<p id="status" role="status" aria-live="polite"></p>
${main}
</main>
<noscript><p>These pages need JavaScript for passkeys.</p></noscript>
</body>
</html>
`;
}

const SIGNIN = `<section id="signed-out" hidden>
<h2>With a passkey</h2>
<p><button type="button" id="passkey-signin">Sign in with a passkey</button></p>
<h2>With a link by e-mail</h2>
<p>Lost your passkey, or your invitation expired? We e-mail you a link that signs you in once, within 15 minutes.</p>
<form id="link-form">
<p><label for="email">E-mail address</label><br>
<input id="email" name="email" type="email" autocomplete="email" required></p>
<p><button type="submit">E-mail me a sign-in link</button></p>
</form>
<h2>With a token</h2>
<p>The operator (ADMIN_TOKEN) and organization tokens: <a href="/dashboard/token">sign in with a token</a>.</p>
</section>
<section id="signed-in" hidden>
<h2 id="who" tabindex="-1"></h2>
<p><a id="to-dashboard" href="/dashboard">Open the dashboard</a></p>
<p id="no-passkey" hidden>You have no passkey yet. Add one to sign in without e-mail next time.</p>
<h3>Your passkeys</h3>
<ul id="passkeys"></ul>
<p><button type="button" id="add-passkey">Add a passkey</button></p>
<h3>Your sessions</h3>
<ul id="sessions"></ul>
<p><button type="button" id="signout">Sign out</button></p>
</section>`;

const INVITATION = `<section id="invited" hidden>
<p id="invite-text"></p>
<p><label for="passkey-name">Name of this passkey (optional)</label><br>
<input id="passkey-name" type="text" maxlength="100" autocomplete="off"></p>
<p><button type="button" id="create-passkey">Create a passkey and sign in</button></p>
</section>
<p id="fallback" hidden><a href="/dashboard/signin">Go to the sign-in page</a></p>`;

function page(kind: "signin" | "invitation", load: () => PageScript | null): Handler<IngressDeps> {
  return (request: HttpRequest, deps: IngressDeps): HttpReply => {
    const script = load();
    if (!script) {
      deps.logger.error({ requestId: request.requestId }, "signin.js is not built (npm run build)");
      return fault(request.requestId);
    }
    const html =
      kind === "signin" ? layout("signin", "Sign in", script, SIGNIN) : layout("invitation", "Accept your invitation", script, INVITATION);
    return { status: 200, headers: { ...PAGE_HEADERS }, body: html };
  };
}

function scriptRoute(load: () => PageScript | null): Handler<IngressDeps> {
  return (request: HttpRequest, deps: IngressDeps): HttpReply => {
    const script = load();
    if (!script) {
      deps.logger.error({ requestId: request.requestId }, "signin.js is not built (npm run build)");
      return fault(request.requestId);
    }
    const versioned = new URLSearchParams(request.query).get("v") === script.version;
    return {
      status: 200,
      headers: {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": versioned ? "public, max-age=31536000, immutable" : "no-cache",
        "x-content-type-options": "nosniff",
      },
      body: script.code,
    };
  };
}

export function registerDashboardRoutes(
  add: (method: string, path: string, handler: Handler<IngressDeps>) => void,
  load = pageScriptLoader("signin"),
): void {
  add("GET", "/dashboard/signin", page("signin", load));
  add("GET", "/dashboard/invitation", page("invitation", load));
  add("GET", "/dashboard/assets/signin.js", scriptRoute(load));
}
