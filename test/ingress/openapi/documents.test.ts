import { readFileSync } from "node:fs";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AUTH_ROUTES, registerAuthRoutes } from "../../../ingress/admin/auth/routes.js";
import { ADMIN_ROUTES } from "../../../ingress/admin/routes.js";
import { adminDocument, publicDocument } from "../../../ingress/openapi/document.js";
import { ADMIN_ANSWERS } from "../../../ingress/openapi/shapes.js";
import { ADMIN_BODIES, ADMIN_BODILESS, ADMIN_QUERIES } from "../../../ingress/openapi/sources.js";
import { REASONS } from "../../../shared/platform/reasons.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { answerChecker, openApiErrors } from "../../helpers/openapi.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("openapi-documents");
});
afterAll(async () => {
  await gw?.stop();
});

describe("the OpenAPI documents", () => {
  it("are valid OpenAPI 3.1 (the official schema, Schema Objects against the OAS dialect)", () => {
    expect(openApiErrors(publicDocument("https://gateway.example"))).toBeNull();
    expect(openApiErrors(adminDocument("https://gateway.example"))).toBeNull();
  });

  it("pass Redocly's recommended lint rules (the linter behind `redocly lint`) without an error", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    for (const [name, document] of [
      ["public", publicDocument("https://gateway.example")],
      ["admin", adminDocument("https://gateway.example")],
    ] as const) {
      const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: `${name}.json`, config });
      const errors = problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message} ${p.location[0]?.pointer ?? ""}`);
      expect(errors, name).toEqual([]);
      // The one warning: no license in `info` (the service is not published under one).
      expect(
        problems.map((p) => p.ruleId).filter((id) => id !== "info-license"),
        name,
      ).toEqual([]);
    }
    // The linter can fail: an operation without a summary is an error of the recommended set.
    const broken = adminDocument("https://gateway.example");
    delete (broken.paths["/admin/v1/me"].get as Record<string, unknown>).summary;
    const found = await lintFromString({ source: JSON.stringify(broken), absoluteRef: "broken.json", config });
    expect(found.some((p) => p.ruleId === "operation-summary" && p.severity === "error")).toBe(true);
  });

  it("the meta-schema check can fail", () => {
    const broken = publicDocument("https://gateway.example");
    (broken.paths["/api/v1/keys.json"].get as Record<string, unknown>).responses = { "200": { content: {} } };
    expect(openApiErrors(broken)).toMatch(/description/);
    expect(openApiErrors({ openapi: "3.0.3", info: { title: "x", version: "1" }, paths: {} })).not.toBeNull();
    // A Schema Object is checked against the OAS dialect (JSON Schema 2020-12).
    expect(openApiErrors({ openapi: "3.1.0", info: { title: "x", version: "1" }, components: { schemas: { A: { type: 5 } } } })).toMatch(
      /schemas\/A/,
    );
    expect(
      openApiErrors({
        openapi: "3.1.0",
        info: { title: "x", version: "1" },
        components: { schemas: { A: { type: "string", "x-note": 1 } } },
      }),
    ).toBeNull();
  });

  it("describe every admin route, and every write route's body or its absence", () => {
    const doc = adminDocument("https://gateway.example");
    const ids = new Set(ADMIN_ROUTES.map((r) => `${r.method} ${r.path}`));
    for (const r of ADMIN_ROUTES) {
      const template = `/admin/v1${r.path.replace(/:([a-z_]+)/g, "{$1}")}`;
      expect(doc.paths[template]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
      if (r.method !== "GET" && r.method !== "DELETE") {
        expect(
          Object.hasOwn(ADMIN_BODIES, `${r.method} ${r.path}`) || ADMIN_BODILESS.has(`${r.method} ${r.path}`),
          `${r.method} ${r.path} has no body description`,
        ).toBe(true);
      }
    }
    for (const id of [...Object.keys(ADMIN_BODIES), ...ADMIN_BODILESS, ...Object.keys(ADMIN_ANSWERS), ...Object.keys(ADMIN_QUERIES)])
      expect(ids.has(id), `${id} is not an admin route`).toBe(true);
    // Query parameters are described for reads only, none required.
    for (const id of Object.keys(ADMIN_QUERIES)) expect(id.startsWith("GET "), id).toBe(true);
    const usage = doc.paths["/admin/v1/orgs/{org}/usage"].get as { parameters: { name: string; in: string; required: boolean }[] };
    expect(usage.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ["org", "path", true],
      ["from", "query", false],
      ["to", "query", false],
    ]);
  });

  it("describe every sign-in route registerAuthRoutes registers, with the security its wrapper checks", () => {
    const doc = adminDocument("https://gateway.example");
    const registered: { method: string; path: string; handler: unknown }[] = [];
    registerAuthRoutes((method, path, handler) => registered.push({ method, path, handler }));
    expect(registered.length).toBeGreaterThan(0);
    for (const { method, path, handler } of registered) {
      const id = `${method} ${path}`;
      const op = doc.paths[path.replace(/:([a-z_]+)/g, "{$1}")]?.[method.toLowerCase()] as
        | { security: Record<string, string[]>[]; requestBody?: unknown; responses: Record<string, unknown>; "x-credential": string }
        | undefined;
      expect(op, `${id} is not in the admin document`).toBeDefined();
      if (!op) continue;
      // The wrapper the handler was made with (auth/common.ts) decides the credential: the table must agree.
      const wrapper = (handler as { credential?: string }).credential;
      expect(wrapper, id).toBeDefined();
      expect(op["x-credential"] === "session" ? "session" : "ceremony", id).toBe(wrapper);
      if (wrapper === "session") {
        expect(op.security, id).toEqual([method === "GET" ? { session: [] } : { session: [], csrf: [] }]);
        expect(Object.keys(op.responses), id).toEqual(expect.arrayContaining(["401", "500"]));
        if (method !== "GET") expect(op.responses, id).toHaveProperty("403");
      } else {
        expect(op.security, id).toEqual([]);
        expect(Object.keys(op.responses), id).toEqual(expect.arrayContaining(["400", "403", "429", "500"]));
      }
      // A POST's body is the schema its handler validates with; a route without one takes none.
      const entry = AUTH_ROUTES.find((r) => r.method === method && r.path === path);
      expect(op.requestBody === undefined, id).toBe(entry?.body === undefined);
    }
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/admin/v1/auth/"))
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(registered.map((r) => `${r.method} ${r.path.replace(/:([a-z_]+)/g, "{$1}")}`).sort());
    const schemes = (doc.components as { securitySchemes: Record<string, Record<string, string>> }).securitySchemes;
    expect(schemes.session).toMatchObject({ type: "apiKey", in: "cookie", name: "__Host-gw_session" });
    expect(
      (adminDocument("http://localhost:8080").components as typeof doc.components & { securitySchemes: typeof schemes }).securitySchemes
        .session.name,
    ).toBe("gw_session");
    expect(schemes.csrf).toMatchObject({ type: "apiKey", in: "header", name: "X-CSRF-Token" });
  });

  it("docs/api.md lists exactly the loosely described success answers", () => {
    const loose: string[] = [];
    for (const doc of [publicDocument("https://gateway.example"), adminDocument("https://gateway.example")]) {
      for (const [path, item] of Object.entries(doc.paths)) {
        if ("$ref" in item) continue;
        for (const [method, op] of Object.entries(
          item as Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>,
        )) {
          const success = op.responses["200"] ?? op.responses["201"];
          if (success.content?.["application/json"]?.schema["x-loose"] === true) loose.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    const docs = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8");
    const section = docs.slice(docs.indexOf("## Described loosely"));
    const listed = [...section.matchAll(/^- `([A-Z]+ \S+)`$/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(loose.sort());
  });

  it("name every reason with its status", () => {
    const reason = (
      publicDocument("https://gateway.example").components as {
        schemas: { Reason: { enum: string[]; "x-reasons": Record<string, { status: number }> } };
      }
    ).schemas.Reason;
    expect(reason.enum).toEqual(Object.keys(REASONS));
    for (const [name, r] of Object.entries(REASONS)) expect(reason["x-reasons"][name].status).toBe(r.status);
  });

  it("are served without credentials, the public one at {base_url}/openapi.json", async () => {
    const pub = await gw.call("/api/v1/openapi.json");
    expect(pub.status).toBe(200);
    expect(pub.body.openapi).toBe("3.1.0");
    expect(pub.body.servers[0].url).toBe(gw.url);
    expect(Object.keys(pub.body.paths)).toContain("/api/v1/verify.php");
    const admin = await gw.call("/admin/v1/openapi.json");
    expect(admin.status).toBe(200);
    expect(Object.keys(admin.body.paths)).toContain("/admin/v1/orgs/{org}/keys");
    expect((await gw.call("/admin/v1/openapi.json", { method: "POST", body: {} })).status).toBe(405);
  });

  it("are serialized once: every answer sends the same bytes, with an ETag, and 304 for a matching If-None-Match", async () => {
    const documents: [string, object][] = [
      ["/api/v1/openapi.json", publicDocument(gw.url)],
      ["/admin/v1/openapi.json", adminDocument(gw.url)],
    ];
    for (const [path] of documents) await (await fetch(`${gw.url}${path}`)).arrayBuffer();
    // Built: the next answers stringify nothing of the size of a document (the admin one is over 200 KB).
    const stringify = vi.spyOn(JSON, "stringify");
    const answers: { path: string; text: string; type: string | null; etag: string | null }[] = [];
    let big: number;
    try {
      for (let i = 0; i < 3; i++) {
        for (const [path] of documents) {
          const res = await fetch(`${gw.url}${path}`);
          answers.push({ path, text: await res.text(), type: res.headers.get("content-type"), etag: res.headers.get("etag") });
        }
      }
      big = stringify.mock.results.filter((r) => r.type === "return" && typeof r.value === "string" && r.value.length > 50_000).length;
    } finally {
      stringify.mockRestore();
    }
    expect(big).toBe(0);
    for (const [path, document] of documents) {
      const bytes = JSON.stringify(document);
      const mine = answers.filter((a) => a.path === path);
      expect(mine.map((a) => a.text === bytes)).toEqual([true, true, true]);
      expect(new Set(mine.map((a) => a.type))).toEqual(new Set(["application/json"]));
      const etag = mine[0].etag ?? "";
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      expect(new Set(mine.map((a) => a.etag)).size).toBe(1);
      const revalidated = await gw.call(path, { headers: { "if-none-match": `W/"other", ${etag}` } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.body).toBe("");
      expect(revalidated.headers.get("etag")).toBe(etag);
      expect((await gw.call(path, { headers: { "if-none-match": '"other"' } })).status).toBe(200);
      const head = await fetch(`${gw.url}${path}`, { method: "HEAD" });
      expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(bytes)));
    }
  });

  it("the answer checker fails a field the document lacks where a shape is fully described", () => {
    const check = answerChecker(gw.url);
    const keys = { keys: [{ kty: "OKP", crv: "Ed25519", x: "abc" }], tokens: { format: "JWT", alg: "EdDSA", types: ["entitlement"] } };
    expect(check("GET", "/api/v1/keys.json", 200, keys, "application/json")).toBeNull();
    expect(check("GET", "/api/v1/keys.json", 200, { ...keys, extra: 1 }, "application/json")).toMatch(/additional/);
    expect(
      check("GET", "/api/v1/verify", 200, { authorized: true, reason: "ok", ts: 1, signature: "s", surprise: true }, "application/json"),
    ).toMatch(/additional/);
    expect(check("POST", "/api/v1/verify.php", 403, { authorized: false, reason: "no_such_reason" }, "application/json")).toMatch(
      /allowed values/,
    );
    expect(check("POST", "/api/v1/verify.php", 418, { authorized: false, reason: "expired" }, "application/json")).toMatch(
      /not in the document/,
    );
    expect(check("GET", "/admin/v1/orgs/1", 400, { ok: false, reason: "bad_name" }, "application/json")).toBeNull();
    expect(check("GET", "/admin/v1/orgs/1", 200, { ok: true }, "application/json")).toMatch(/org/);
    expect(check("GET", "/api/v1/nothing-here", 404, { ok: false, reason: "unknown_endpoint" }, "application/json")).toBeNull();
    expect(check("GET", "/api/v1/nothing-here", 404, { ok: false }, "application/json")).toMatch(/reason/);
    // The sign-in routes: their answers fully described, their refusals to the reasons each gives.
    const passkeys = { ok: true, passkeys: [] };
    expect(check("GET", "/admin/v1/auth/passkeys", 200, passkeys, "application/json")).toBeNull();
    expect(check("GET", "/admin/v1/auth/passkeys", 200, { ...passkeys, extra: 1 }, "application/json")).toMatch(/additional/);
    expect(check("GET", "/admin/v1/auth/passkeys", 401, { ok: false, reason: "session_expired" }, "application/json")).toBeNull();
    expect(check("GET", "/admin/v1/auth/passkeys", 403, { ok: false, reason: "csrf_rejected" }, "application/json")).toMatch(
      /not in the document/,
    );
    expect(check("DELETE", "/admin/v1/auth/passkeys/3", 403, { ok: false, reason: "csrf_rejected" }, "application/json")).toBeNull();
    expect(check("DELETE", "/admin/v1/auth/passkeys/3", 409, { ok: false, reason: "not_found" }, "application/json")).toMatch(
      /allowed values/,
    );
    expect(check("POST", "/admin/v1/auth/signin/link/consume", 400, { ok: false, reason: "missing_token" }, "application/json")).toBeNull();
    expect(check("POST", "/admin/v1/auth/signin/link/consume", 401, { ok: false, reason: "invalid_passkey" }, "application/json")).toMatch(
      /not in the document/,
    );
  });
});
