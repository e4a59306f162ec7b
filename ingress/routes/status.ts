import { type StatusSnapshot, renderAtom, badgeLanguage, renderBadge, renderPage, renderSummary } from "../../shared/status/index.js";
import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import type { HttpRequest } from "../types.js";
import { fromSnapshot, statusMethodNotAllowed } from "./status/reply.js";
import { statusReport } from "./status/report.js";

/**
 * The public status resources (interface.md 2.9 and 4.10, docs/status.md): the document,
 * the human page, the Statuspage-compatible summary, the Atom feed and the badge, all
 * rendered from one snapshot built at most once a minute; the quarterly report from
 * PostgreSQL. Paths are under `{site_url}`, outside /api/v1.
 */

const render = (fn: (snapshot: StatusSnapshot) => string) => (cached: { snapshot(): StatusSnapshot }) => fn(cached.snapshot());

export const statusDocument = (request: HttpRequest, deps: IngressDeps) =>
  fromSnapshot(request, deps, { suffix: "", contentType: "application/json; charset=utf-8", render: (cached) => cached.json });

const statusPage = (request: HttpRequest, deps: IngressDeps) =>
  fromSnapshot(request, deps, { suffix: "page", contentType: "text/html; charset=utf-8", render: render(renderPage) });

const statusSummary = (request: HttpRequest, deps: IngressDeps) =>
  fromSnapshot(request, deps, {
    suffix: "summary",
    contentType: "application/json; charset=utf-8",
    render: render((s) => JSON.stringify(renderSummary(s))),
  });

const statusFeed = (request: HttpRequest, deps: IngressDeps) =>
  fromSnapshot(request, deps, { suffix: "atom", contentType: "application/atom+xml; charset=utf-8", render: render(renderAtom) });

const statusBadge = (request: HttpRequest, deps: IngressDeps) => {
  const lang = badgeLanguage(new URLSearchParams(request.query).get("lang"));
  return fromSnapshot(request, deps, {
    suffix: `badge-${lang}`,
    contentType: "image/svg+xml; charset=utf-8",
    render: render((s) => renderBadge(s.document.status.indicator, lang)),
  });
};

export function registerStatusRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  const routes: [string, Handler<IngressDeps>][] = [
    ["/api/status.php", statusDocument],
    ["/status", statusPage],
    ["/status/summary.json", statusSummary],
    ["/status/feed.atom", statusFeed],
    ["/status/report", statusReport],
    ["/status-badge.php", statusBadge],
  ];
  for (const [path, handler] of routes) {
    add("GET", path, handler);
    add("*", path, statusMethodNotAllowed);
  }
}
