import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoRoute } from "../../ingress/routes/demo.js";
import type { HttpRequest } from "../../ingress/types.js";
import { prepareDemoPage } from "../../ops/demo.js";
import { seedDemo } from "../../ops/seed.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("embed-demo");
});
afterAll(async () => {
  await gw?.stop();
});

const request = (host: string): HttpRequest => ({
  method: "GET",
  path: "/demo",
  query: "",
  headers: { host },
  headerOrder: ["host"],
  body: Buffer.alloc(0),
  remoteAddress: "127.0.0.1",
  requestId: "t-1",
  startedMs: performance.now(),
});

describe("demo page", () => {
  it("is off without demo keys", async () => {
    const answer = await gw.call("/demo");
    expect(answer.status).toBe(404);
  });

  it("demo mode: fresh keys each start; the page verifies server-side through the client and embeds the widget under a CSP", async () => {
    expect(await prepareDemoPage(gw.ctx.db, gw.ctx.clock.now(), true)).toBeNull(); // no demo organization yet
    expect(await seedDemo(gw.ctx.db, gw.ctx.clock.now(), true)).not.toBeNull();
    const first = await prepareDemoPage(gw.ctx.db, gw.ctx.clock.now(), true);
    const keys = await prepareDemoPage(gw.ctx.db, gw.ctx.clock.now(), true);
    expect(keys?.client).toMatch(/^ak_live_/);
    expect(keys?.client).not.toBe(first?.client);
    await gw.ingress.deps.projector.rebuildAll();
    const deps = { ...gw.ingress.deps, config: { ...gw.ingress.deps.config, demoKeys: keys } };
    // The previous start's keys were revoked.
    const old = await gw.call("/api/v1/verify.php", { body: { key: first?.client, domain: "demo.localhost" } });
    expect(old.body.reason).toBe("invalid_key");
    const page = await demoRoute()(request(`demo.localhost:${gw.ingress.port}`), deps);
    expect(page.status).toBe(200);
    const html = String(page.body);
    expect(html).toContain(`data-key="${keys?.client}"`);
    expect(html).toContain("<tr><th>authorized</th><td>true</td></tr><tr><th>source</th><td>service</td></tr>");
    expect(html).not.toContain("would be refused");
    expect(page.headers?.["content-security-policy"]).toMatch(/^default-src 'none'; script-src 'nonce-/);
    const elsewhere = await demoRoute()(request(`127.0.0.1:${gw.ingress.port}`), deps);
    expect(String(elsewhere.body)).toContain(`http://demo.localhost:${gw.ingress.port}/demo`);
    // The widget's key is live for the demo host, with bot protection on.
    const check = await gw.call("/api/v1/botcheck.php", {
      body: { key: keys?.client },
      headers: { origin: "http://demo.localhost:8080", "user-agent": "curl/8.5.0" },
    });
    expect(check.body).toMatchObject({ enforced: true, reason: "bot_ua" });
  });
});
