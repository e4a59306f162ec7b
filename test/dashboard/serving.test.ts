import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGNIN_PAGES_CSP } from "../../ingress/dashboard/pages.js";
import { DASHBOARD_CSP } from "../../ingress/dashboard/spa.js";
import { buildDashboard, SCRIPT_BUDGET_GZIP_BYTES } from "../../ops/embed/dashboard-build.js";
import { DASHBOARD_DIR, type DashboardManifest } from "../../shared/embed/dashboard-asset.js";
import { insertCheck } from "../../shared/status/db/status.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";

/**
 * How the ingress serves the dashboard (docs/dashboard.md): one shell for every dashboard
 * address under the strict policy, the hashed assets cached a year (gzip when asked), and
 * the services list's `last_probe` the operator page shows.
 */

let gw: TestGateway;
let manifest: DashboardManifest;

beforeAll(async () => {
  manifest = await buildDashboard(DASHBOARD_DIR);
  // The services test adds a probe of a private address, refused at once without it.
  gw = await startTestGateway("dashboard-serving", { PROBE_ALLOW_PRIVATE: "1" });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

async function get(path: string, headers: Record<string, string> = {}) {
  return fetch(`${gw.url}${path}`, { headers });
}

describe("the dashboard shell", () => {
  it("is the same page for every dashboard address, under the strict policy", async () => {
    for (const path of [
      "/dashboard",
      "/dashboard/",
      "/dashboard/token",
      "/dashboard/orgs/7/keys/12?tab=usage",
      "/dashboard/orgs/7/findings/shop.example.com/tls:hsts",
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(answer.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(answer.headers.get("x-frame-options")).toBe("DENY");
      expect(answer.headers.get("cache-control")).toBe("no-cache");
      const html = await answer.text();
      expect(html).toContain(`<script src="/dashboard/assets/${manifest.js.name}" defer></script>`);
      expect(html).toContain(`<link rel="stylesheet" href="/dashboard/assets/${manifest.css.name}">`);
      // No inline script and no inline style for the policy to refuse.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/\sstyle=|<style/);
    }
    // The members' sign-in and invitation pages are exact routes of their own, matched before
    // the shell's patterns: their own script, the shell's style sheet, no inline script or style.
    for (const path of ["/dashboard/signin", "/dashboard/invitation"]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-security-policy"), path).toBe(SIGNIN_PAGES_CSP);
      const html = await answer.text();
      expect(html, path).toContain('<script src="/dashboard/assets/signin.js?v=');
      expect(html, path).toContain(`<link rel="stylesheet" href="/dashboard/assets/${manifest.css.name}">`);
      expect(html, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html, path).not.toMatch(/\sstyle=|<style/);
    }
    expect(SIGNIN_PAGES_CSP).toBe(DASHBOARD_CSP.replace("connect-src 'self'; ", "connect-src 'self'; img-src 'self'; "));
    expect(DASHBOARD_CSP).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';/);
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
  });

  it("answers HEAD without a body, and leaves other paths alone", async () => {
    const head = await fetch(`${gw.url}/dashboard/orgs/1`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect((await get("/dashboardx")).status).toBe(404);
    expect((await fetch(`${gw.url}/dashboard`, { method: "POST" })).status).toBe(405);
  });
});

describe("the dashboard's assets", () => {
  it("are served by their hashed names, cached a year, gzipped when asked", async () => {
    expect(manifest.js.name).toMatch(/^app\.[0-9a-f]{12}\.js$/);
    expect(manifest.js.gzip_bytes).toBeLessThanOrEqual(SCRIPT_BUDGET_GZIP_BYTES);
    const plain = await get(`/dashboard/assets/${manifest.js.name}`, { "accept-encoding": "identity" });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("x-content-type-options")).toBe("nosniff");
    const code = Buffer.from(await plain.arrayBuffer());
    expect(code.length).toBe(manifest.js.bytes);
    // node's fetch decodes the gzip itself and keeps the header: the bytes are the style sheet's.
    const zipped = await fetch(`${gw.url}/dashboard/assets/${manifest.css.name}`, { headers: { "accept-encoding": "gzip" } });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(Buffer.from(await zipped.arrayBuffer()).length).toBe(manifest.css.bytes);
  });

  it("refuses names the build did not make", async () => {
    for (const name of ["app.js", "app.000000000000.js", "..%2Fmanifest.json", "manifest.json"]) {
      const answer = await get(`/dashboard/assets/${name}`);
      expect(answer.status, name).toBe(404);
    }
  });

  it("prints the budget figures", () => {
    process.stdout.write(
      `\ndashboard script ${manifest.js.bytes} bytes minified, ${manifest.js.gzip_bytes} gzipped (budget ${SCRIPT_BUDGET_GZIP_BYTES}); ` +
        `style sheet ${manifest.css.bytes} bytes, ${manifest.css.gzip_bytes} gzipped\n`,
    );
  });
});

describe("GET /admin/v1/status/services", () => {
  it("carries each service's last probe, with why it failed", async () => {
    const put = await gw.admin("PUT", "/status/services/api", { name: "API", url: "https://10.0.0.5/healthz" });
    expect(put.status).toBe(200);
    const before = await gw.admin("GET", "/status/services");
    expect(before.body.services.find((s: { key: string }) => s.key === "api").last_probe).toBeNull();
    const now = gw.ctx.clock.now();
    await insertCheck(gw.ctx.db, {
      service: "api",
      slotMs: now - 120_000,
      atMs: now - 120_000,
      ok: true,
      latencyMs: 40,
      statusCode: 200,
      error: null,
    });
    await insertCheck(gw.ctx.db, {
      service: "api",
      slotMs: now - 60_000,
      atMs: now - 60_000,
      ok: false,
      latencyMs: null,
      statusCode: null,
      error: "refused address 10.0.0.5 (private)",
    });
    const after = await gw.admin("GET", "/status/services");
    expect(after.status).toBe(200);
    const api = after.body.services.find((s: { key: string }) => s.key === "api");
    expect(api).toMatchObject({
      key: "api",
      name: "API",
      configured: true,
      last_probe: { ok: false, latency_ms: null, status_code: null, error: "refused address 10.0.0.5 (private)" },
    });
    expect(api.last_probe.at).toBe(new Date(now - 60_000).toISOString().replace(/\.\d{3}Z$/, "Z"));
    expect(after.body.services.find((s: { key: string }) => s.key === "website").last_probe).toBeNull();
  });
});
