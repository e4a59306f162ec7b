import { embedAssetLoader } from "../../shared/embed/asset.js";
import type { IngressDeps } from "../deps.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { fault } from "../reply.js";

/**
 * `{site_url}/botcheck.js`: the page script of the bot check (docs/embed.md). The URL
 * with `?v=<version>` of the current build is immutable and cached a year; the bare URL
 * (or an old version) is cached five minutes so sites that use it get updates within
 * minutes. Gzip when the browser takes it, else identity; ETag for revalidation.
 */
export function embedScriptRoute(load = embedAssetLoader()) {
  return function botcheckScript(request: HttpRequest, deps: IngressDeps): HttpReply {
    const asset = load();
    if (asset === null) {
      deps.logger.error({ requestId: request.requestId }, "botcheck.js is not built (npm run build)");
      return fault(request.requestId, true);
    }
    const { version } = asset.manifest;
    const versioned = new URLSearchParams(request.query).get("v") === version;
    const gzip = /\bgzip\b/i.test(request.headers["accept-encoding"] ?? "");
    const etag = `"${version}${gzip ? "-gz" : ""}"`;
    const headers: Record<string, string> = {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "access-control-allow-origin": "*",
      "cross-origin-resource-policy": "cross-origin",
      "x-content-type-options": "nosniff",
      vary: "accept-encoding",
      etag,
      "x-botcheck-version": version,
    };
    if (request.headers["if-none-match"]?.split(/\s*,\s*/).includes(etag)) return { status: 304, headers, body: "" };
    if (gzip) headers["content-encoding"] = "gzip";
    return { status: 200, headers, body: gzip ? asset.gzip : asset.code };
  };
}
