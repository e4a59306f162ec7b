import { randomBytes } from "node:crypto";
import { createVerifyClient, type VerifyClient } from "../../shared/client/index.js";
import { embedAssetLoader } from "../../shared/embed/asset.js";
import type { IngressDeps } from "../deps.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { demoHtml } from "./demo/page.js";

/**
 * `{site_url}/demo` in demo mode (`npm start` without ADMIN_TOKEN, docs/embed.md): a
 * protected page with the bot-check widget, and a server-side verify made through the
 * verify client while the page renders. Off (404) when the demo keys are not configured.
 */

export const DEMO_PAGE_HOST = "demo.localhost";

export function demoRoute(load = embedAssetLoader()) {
  let client: VerifyClient | null = null;
  return async function demo(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
    const keys = deps.config.demoKeys;
    if (keys === null) {
      return {
        status: 404,
        headers: { "content-type": "text/plain; charset=utf-8" },
        body: "The demo page runs in demo mode only (npm start without ADMIN_TOKEN).\n",
      };
    }
    const base = deps.baseUrl();
    client ??= createVerifyClient({
      baseUrl: base,
      key: keys.server,
      install: "demo-page",
      timeoutMs: 3000,
      onNotice: (notice) => deps.logger.warn({ notice }, "verify notice"),
    });
    const verified = await client.verify({ domain: DEMO_PAGE_HOST });
    const site = base.replace(/\/api\/v1$/, "");
    const asset = load();
    const scriptUrl = `${site}/botcheck.js${asset ? `?v=${asset.manifest.version}` : ""}`;
    const hostHeader = request.headers.host ?? "";
    const hostName = hostHeader.replace(/:\d+$/, "").toLowerCase();
    const port = /:(\d+)$/.exec(hostHeader)?.[1];
    const goodUrl = hostName === DEMO_PAGE_HOST ? null : `http://${DEMO_PAGE_HOST}${port ? `:${port}` : ""}/demo`;
    const nonce = randomBytes(16).toString("base64");
    const origin = new URL(site).origin;
    return {
      status: 200,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}' ${origin}; style-src 'nonce-${nonce}'; connect-src ${origin}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        "referrer-policy": "strict-origin-when-cross-origin",
        "x-content-type-options": "nosniff",
      },
      body: demoHtml({ nonce, scriptUrl, clientKey: keys.client, verified, goodUrl }),
    };
  };
}
