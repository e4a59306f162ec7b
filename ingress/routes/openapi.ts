import type { IngressDeps } from "../deps.js";
import { adminDocument, publicDocument, type OpenApiDocument } from "../openapi/document.js";
import { contentSecurityPolicy, referenceHtml } from "../openapi/html.js";
import type { HttpReply } from "../types.js";

/**
 * The API descriptions (docs/api.md): `{base_url}/openapi.json`, `/admin/v1/openapi.json`
 * and the reference page `/docs/api`. All three are descriptions, not data: none needs
 * credentials. Built once per site URL, on first request.
 */
export function apiDescriptionRoutes() {
  let built: { siteUrl: string; publicDoc: OpenApiDocument; adminDoc: OpenApiDocument; html: string } | null = null;
  const documents = (deps: IngressDeps) => {
    const siteUrl = deps.baseUrl().replace(/\/api\/v1$/, "");
    if (built?.siteUrl !== siteUrl) {
      const publicDoc = publicDocument(siteUrl);
      const adminDoc = adminDocument(siteUrl);
      built = { siteUrl, publicDoc, adminDoc, html: referenceHtml(publicDoc, adminDoc, siteUrl) };
    }
    return built;
  };
  const asJson = (doc: OpenApiDocument): HttpReply => ({
    status: 200,
    headers: { "access-control-allow-origin": "*", "cache-control": "public, max-age=300" },
    body: doc,
  });
  return {
    publicOpenapi: (_request: unknown, deps: IngressDeps): HttpReply => asJson(documents(deps).publicDoc),
    adminOpenapi: (_request: unknown, deps: IngressDeps): HttpReply => asJson(documents(deps).adminDoc),
    reference: (_request: unknown, deps: IngressDeps): HttpReply => ({
      status: 200,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "public, max-age=300",
        "content-security-policy": contentSecurityPolicy,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      },
      body: documents(deps).html,
    }),
  };
}
