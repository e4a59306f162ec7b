import { dashboardAssetLoader, type DashboardAsset } from "../../shared/embed/dashboard-asset.js";
import type { IngressDeps } from "../deps.js";
import { fault } from "../reply.js";
import type { Handler } from "../router.js";
import type { HttpReply, HttpRequest } from "../types.js";

/**
 * `{site_url}/dashboard` (docs/dashboard.md): one HTML shell for every dashboard path (the
 * script reads the path and query, so every page can be linked and reloaded), and the two
 * built assets under /dashboard/assets/, named by their content hash and cached a year.
 *
 * The shell carries no inline script and no inline style, so the policy can be strict:
 * nothing but this origin's script, style sheet and JSON API; no framing; no plugins; no
 * form posts elsewhere. Everything the dashboard shows comes from the API as JSON and is
 * rendered as text (Preact), never as markup.
 */

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SHELL_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  // The shell names the current build's assets: always asked again, so a deploy shows at once.
  "cache-control": "no-cache",
  "content-security-policy": DASHBOARD_CSP,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
} as const;

/** How many path segments a dashboard address may have (`/dashboard/orgs/1/findings/<domain>/<finding>`). */
const MAX_DEPTH = 6;

export function shellHtml(asset: DashboardAsset): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Dashboard · Access gateway</title>
<link rel="stylesheet" href="/dashboard/assets/${asset.manifest.css.name}">
<script src="/dashboard/assets/${asset.manifest.js.name}" defer></script>
</head>
<body>
<div id="app"><p class="boot" role="status">Loading the dashboard…</p></div>
<noscript><p class="boot">The dashboard needs JavaScript. The admin API (/admin/v1) and the ops command line do everything it does.</p></noscript>
</body>
</html>
`;
}

function shell(load: () => DashboardAsset | null): Handler<IngressDeps> {
  return (request: HttpRequest, deps: IngressDeps): HttpReply => {
    const asset = load();
    if (!asset) {
      deps.logger.error({ requestId: request.requestId }, "the dashboard is not built (npm run build)");
      return fault(request.requestId);
    }
    return { status: 200, headers: { ...SHELL_HEADERS }, body: shellHtml(asset) };
  };
}

function assetRoute(load: () => DashboardAsset | null): Handler<IngressDeps> {
  return (request, deps, params): HttpReply => {
    const asset = load();
    if (!asset) {
      deps.logger.error({ requestId: request.requestId }, "the dashboard is not built (npm run build)");
      return fault(request.requestId);
    }
    const file = asset.files.get(params.file ?? "");
    if (!file)
      return { status: 404, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }, body: "not found\n" };
    const gzip = /\bgzip\b/i.test(request.headers["accept-encoding"] ?? "");
    const headers: Record<string, string> = {
      "content-type": file.type,
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "same-origin",
      vary: "accept-encoding",
    };
    if (gzip) headers["content-encoding"] = "gzip";
    return { status: 200, headers, body: gzip ? file.gzip : file.code };
  };
}

/**
 * The assets first, then the shell for `/dashboard` and every path under it. Exact routes
 * registered elsewhere (a sign-in page of its own, say) are matched before these patterns.
 */
export function registerDashboardSpa(
  add: (method: string, path: string, handler: Handler<IngressDeps>) => void,
  load = dashboardAssetLoader(),
): void {
  add("GET", "/dashboard/assets/:file", assetRoute(load));
  const page = shell(load);
  let path = "/dashboard";
  add("GET", path, page);
  for (let depth = 1; depth <= MAX_DEPTH; depth++) {
    path += `/:p${depth}`;
    add("GET", path, page);
  }
}
