import { pageScriptLoader, type PageScript } from "../../shared/embed/asset.js";
import { dashboardAssetLoader, type DashboardAsset } from "../../shared/embed/dashboard-asset.js";
import type { IngressDeps } from "../deps.js";
import type { Handler } from "../router.js";
import { fault } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";

/**
 * The sign-in and invitation pages (docs/accounts-members.md): accessible HTML whose one
 * script (shared/embed/signin/, built by ops/embed/build.ts) talks to /admin/v1/auth/. They
 * wear the dashboard's look: its one style sheet (the hashed `app.<hash>.css` the shell
 * links, ingress/dashboard/spa.ts) and the markup of its own sign-in page, /dashboard/token
 * (dashboard/src/pages/signin.tsx: a card with the brand, sections, fields, buttons and
 * notices). Served under a strict Content-Security-Policy: scripts, style sheets and requests
 * only from this origin, no inline script or style, no framing, no form posts elsewhere.
 * They are the members' way into the dashboard (docs/dashboard.md, "Getting in"): a sign-in
 * sends the member on to /dashboard (or the dashboard address of `?next=`), where the SPA
 * resumes the session. These exact routes are matched before the SPA shell's patterns.
 */

/** The shell's policy (spa.ts) plus `img-src 'self'`: the style sheet is the shell's, the script their own. */
export const SIGNIN_PAGES_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": SIGNIN_PAGES_CSP,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
} as const;

interface MemberPage {
  kind: "signin" | "invitation";
  title: string;
  main: string;
}

function layout(page: MemberPage, script: PageScript, dashboard: DashboardAsset): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${page.title} · Access gateway</title>
<link rel="stylesheet" href="/dashboard/assets/${dashboard.manifest.css.name}">
<script src="/dashboard/assets/signin.js?v=${script.version}" defer></script>
</head>
<body data-page="${page.kind}" data-state="loading">
<div class="signin">
<main id="main" class="signin-card">
<p class="brand">Access gateway</p>
<h1>${page.title}</h1>
<p id="status" role="status" aria-live="polite"></p>
<noscript><p class="refusal">These pages need JavaScript for passkeys.</p></noscript>
${page.main}
</main>
</div>
</body>
</html>
`;
}

const SIGNIN = `<div id="link-account" hidden>
<section aria-labelledby="link-account-title">
<h2 id="link-account-title" class="break" tabindex="-1">Sign in with this link?</h2>
<p id="link-account-text" class="break"></p>
<p class="hint">Only if this is your account: a link someone else sent you signs you in to theirs.</p>
<p class="actions"><button type="button" id="link-signin" class="primary">Sign in</button> <button type="button" id="link-not-mine">Not my account</button></p>
</section>
</div>
<div id="signed-out" hidden>
<section aria-labelledby="with-passkey">
<h2 id="with-passkey">With a passkey</h2>
<p><button type="button" id="passkey-signin" class="primary">Sign in with a passkey</button></p>
</section>
<section aria-labelledby="with-link">
<h2 id="with-link">With a link by e-mail</h2>
<form id="link-form" class="stack">
<div class="field">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required aria-describedby="email-hint">
<p class="hint" id="email-hint">Lost your passkey, or your invitation expired? We e-mail you a link that signs you in once, within 15 minutes.</p>
</div>
<p><button type="submit">E-mail me a sign-in link</button></p>
</form>
</section>
<section aria-labelledby="with-token">
<h2 id="with-token">With a token</h2>
<p>The operator (ADMIN_TOKEN) and organization tokens: <a href="/dashboard/token">sign in with a token</a>.</p>
</section>
</div>
<div id="signed-in" hidden>
<section aria-labelledby="who">
<h2 id="who" class="break" tabindex="-1"></h2>
<p><a id="to-dashboard" class="button-link" href="/dashboard">Open the dashboard</a></p>
</section>
<section aria-labelledby="passkeys-title">
<h2 id="passkeys-title">Your passkeys</h2>
<p id="no-passkey" class="hint" hidden>You have no passkey yet. Add one to sign in without e-mail next time.</p>
<ul id="passkeys" class="plain-list"></ul>
<p><button type="button" id="add-passkey">Add a passkey</button></p>
</section>
<section aria-labelledby="sessions-title">
<h2 id="sessions-title">Your sessions</h2>
<ul id="sessions" class="plain-list"></ul>
<p><button type="button" id="signout">Sign out</button></p>
</section>
</div>`;

const INVITATION = `<section id="invited" class="stack" hidden>
<p id="invite-text" class="break"></p>
<div class="field">
<label for="passkey-name">Name of this passkey (optional)</label>
<input id="passkey-name" type="text" maxlength="100" autocomplete="off" aria-describedby="passkey-name-hint">
<p class="hint" id="passkey-name-hint">Shown in your list of passkeys, to tell your devices apart.</p>
</div>
<p><button type="button" id="create-passkey" class="primary">Create a passkey and sign in</button></p>
</section>
<p id="fallback" hidden><a class="button-link" href="/dashboard/signin">Go to the sign-in page</a></p>`;

const PAGES: Record<MemberPage["kind"], MemberPage> = {
  signin: { kind: "signin", title: "Sign in", main: SIGNIN },
  invitation: { kind: "invitation", title: "Accept your invitation", main: INVITATION },
};

function page(kind: MemberPage["kind"], load: () => PageScript | null, loadDashboard: () => DashboardAsset | null): Handler<IngressDeps> {
  return (request: HttpRequest, deps: IngressDeps): HttpReply => {
    const script = load();
    const dashboard = loadDashboard();
    if (!script || !dashboard) {
      deps.logger.error({ requestId: request.requestId }, `${script ? "the dashboard" : "signin.js"} is not built (npm run build)`);
      return fault(request.requestId);
    }
    return { status: 200, headers: { ...PAGE_HEADERS }, body: layout(PAGES[kind], script, dashboard) };
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
  loadDashboard = dashboardAssetLoader(),
): void {
  add("GET", "/dashboard/signin", page("signin", load, loadDashboard));
  add("GET", "/dashboard/invitation", page("invitation", load, loadDashboard));
  add("GET", "/dashboard/assets/signin.js", scriptRoute(load));
}
