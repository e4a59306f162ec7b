import { createHash } from "node:crypto";
import type { IngressDeps } from "../deps.js";
import { adminDocument, publicDocument, type OpenApiDocument } from "../openapi/document.js";
import { contentSecurityPolicy, referenceHtml } from "../openapi/html.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { notModified } from "./status/reply.js";

/** A document serialized once: the bytes every request is answered with, and their ETag. */
interface Serialized {
  body: Buffer;
  etag: string;
}

function serialize(doc: OpenApiDocument): Serialized {
  const body = Buffer.from(JSON.stringify(doc));
  return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
}

/**
 * The API descriptions (docs/api.md): `{base_url}/openapi.json`, `/admin/v1/openapi.json`
 * and the reference page `/docs/api`. All three are descriptions, not data: none needs
 * credentials. Built and serialized once per site URL, on first request (the admin
 * document is about 230 KB: stringifying it per request cost more than answering it).
 */
export function apiDescriptionRoutes() {
  let built: { siteUrl: string; publicDoc: Serialized; adminDoc: Serialized; html: string } | null = null;
  const documents = (deps: IngressDeps) => {
    const siteUrl = deps.baseUrl().replace(/\/api\/v1$/, "");
    if (built?.siteUrl !== siteUrl) {
      const publicDoc = publicDocument(siteUrl);
      const adminDoc = adminDocument(siteUrl);
      built = {
        siteUrl,
        publicDoc: serialize(publicDoc),
        adminDoc: serialize(adminDoc),
        html: referenceHtml(publicDoc, adminDoc, siteUrl),
      };
    }
    return built;
  };
  const asJson = (request: HttpRequest, doc: Serialized): HttpReply => {
    const headers = {
      "content-type": "application/json",
      "access-control-allow-origin": "*",
      "cache-control": "public, max-age=300",
      etag: doc.etag,
    };
    if (notModified(request, doc.etag)) return { status: 304, headers, body: "" };
    return { status: 200, headers, body: doc.body };
  };
  return {
    publicOpenapi: (request: HttpRequest, deps: IngressDeps): HttpReply => asJson(request, documents(deps).publicDoc),
    adminOpenapi: (request: HttpRequest, deps: IngressDeps): HttpReply => asJson(request, documents(deps).adminDoc),
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
