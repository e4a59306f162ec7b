import { createHash } from "node:crypto";
import type { IngressDeps } from "../deps.js";
import type { HttpReply, HttpRequest } from "../types.js";

/**
 * `GET /`: a small page pointing a newcomer at what the service serves (the status page,
 * the dashboard, the API reference, the demo in demo mode). Static but for the demo link;
 * no script at all, and the one style block is allowed by its hash, not 'unsafe-inline'.
 */

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328}a{color:#0969da}li{margin:.4rem 0}";
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

export const LANDING_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export function landingHtml(demo: boolean): string {
  const links = [
    ["/status", "Status page", "service health, incidents and maintenance"],
    ["/dashboard", "Dashboard", "sign in to manage keys, domains and findings"],
    ["/docs/api", "API reference", "the public and admin APIs"],
    ...(demo ? [["/demo", "Demo", "a protected page with the bot-check widget (demo mode)"]] : []),
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Access gateway</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Access gateway</h1>
<p>API key verification, protected content and security scans.</p>
<ul>
${links.map(([href, name, what]) => `<li><a href="${href}">${name}</a>: ${what}</li>`).join("\n")}
</ul>
</main>
</body>
</html>
`;
}

export async function landing(_request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  return {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": LANDING_CSP,
      "referrer-policy": "strict-origin-when-cross-origin",
      "x-content-type-options": "nosniff",
    },
    body: landingHtml(deps.config.demoKeys !== null),
  };
}
