import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { landing } from "../../../ingress/routes/landing.js";
import type { HttpRequest } from "../../../ingress/types.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("landing");
});
afterAll(async () => {
  await gw?.stop();
});

describe("GET /", () => {
  it("serves a small landing page linking the status page, the dashboard and the API reference, under a strict CSP", async () => {
    const res = await fetch(`${gw.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    for (const href of ["/status", "/dashboard", "/docs/api"]) expect(html).toContain(`href="${href}"`);
    // Not in demo mode: no demo link.
    expect(html).not.toContain('href="/demo"');
    expect(html).not.toMatch(/<script|\son\w+=/i);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/^default-src 'none';/);
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toMatch(/script-src/);
    const style = /<style>([^<]*)<\/style>/.exec(html)?.[1] ?? "";
    expect(csp).toContain(`'sha256-${createHash("sha256").update(style).digest("base64")}'`);
  });

  it("links the demo in demo mode", async () => {
    const deps = { ...gw.ingress.deps, config: { ...gw.ingress.deps.config, demoKeys: { client: "ak_test_x", server: "sk_test_x" } } };
    const page = await landing({} as HttpRequest, deps);
    expect(page.body).toContain('href="/demo"');
  });

  it("any other method on / is 405, with message", async () => {
    const res = await fetch(`${gw.url}/`, { method: "POST", body: "{}" });
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ ok: false, reason: "method_not_allowed", message: expect.any(String) });
  });
});
