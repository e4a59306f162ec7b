import type { CachedStatus } from "../../../shared/status/index.js";
import type { IngressDeps } from "../../deps.js";
import { refuse } from "../../reply.js";
import type { FaultHook, HttpReply, HttpRequest } from "../../types.js";

/** What every public status resource shares: read-only, readable from any origin, cached a minute. */

export const ALLOW = "GET, HEAD";
export const CACHE_CONTROL = "public, max-age=60";

/**
 * The HTML page and report load nothing but their inline stylesheet and `style` attributes
 * (no script, no image, no font; the Atom `<link rel="alternate">` is not fetched), so
 * everything else is refused; `img-src` still lets a browser ask for the site's favicon.
 */
export const HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** What the HTML renderings (page, report) add to their headers. */
export const HTML_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": HTML_CSP,
  "x-content-type-options": "nosniff",
});

export function publicHeaders(contentType: string, etag: string): Record<string, string> {
  const headers = { "content-type": contentType, "cache-control": CACHE_CONTROL, etag, "access-control-allow-origin": "*" };
  return contentType.startsWith("text/html") ? { ...headers, ...HTML_HEADERS } : { ...headers, "x-content-type-options": "nosniff" };
}

/** Any method but GET (HEAD is answered as GET): 405 with Allow, and the CORS header so a browser can read why. */
export function statusMethodNotAllowed(): HttpReply {
  return refuse("method_not_allowed", {}, { allow: ALLOW, "access-control-allow-origin": "*", "cache-control": "no-store" });
}

/** An ETag per representation of one cached snapshot: the document's with a suffix. */
export function variantTag(cached: CachedStatus, suffix: string): string {
  return suffix === "" ? cached.etag : `${cached.etag.slice(0, -1)}-${suffix}"`;
}

/** True when the client's If-None-Match names this ETag (or `*`). */
export function notModified(request: HttpRequest, etag: string): boolean {
  const header = request.headers["if-none-match"];
  if (!header) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

// Renderings of one cached copy, by variant: a copy lives a minute and is read many times.
// Keyed by the copy itself, so a new build leaves the old renderings to the collector.
const rendered = new WeakMap<CachedStatus, Map<string, string>>();

function renderOnce(cached: CachedStatus, suffix: string, render: (cached: CachedStatus) => string): string {
  let variants = rendered.get(cached);
  if (!variants) rendered.set(cached, (variants = new Map()));
  let body = variants.get(suffix);
  if (body === undefined) variants.set(suffix, (body = render(cached)));
  return body;
}

const STATUS_FAULT_HEADERS = Object.freeze({ "access-control-allow-origin": "*", "retry-after": "10" });
const STATUS_FAULT: FaultHook = Object.freeze({ headers: () => STATUS_FAULT_HEADERS });

/** Serves one representation of the cached snapshot, with 304 for a matching If-None-Match and 503 when none can be had. */
export async function fromSnapshot(
  request: HttpRequest,
  deps: IngressDeps,
  variant: { suffix: string; contentType: string; render: (cached: CachedStatus) => string },
): Promise<HttpReply> {
  // No snapshot to be had (PostgreSQL down): the route wrapper's fault answer, readable from any origin, retried soon.
  request.fault = STATUS_FAULT;
  const cached = await deps.status.current();
  const etag = variantTag(cached, variant.suffix);
  const headers = publicHeaders(variant.contentType, etag);
  if (notModified(request, etag)) return { status: 304, headers, body: "" };
  return { status: 200, headers, body: renderOnce(cached, variant.suffix, variant.render) };
}
