import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCheck, upsertService, type ServiceKey } from "../../../shared/status/db/status.js";
import { createStatusCache } from "../../../shared/status/cache.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

const DAY_S = 86_400;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway("statusdoc");
});
afterAll(async () => {
  await gw?.stop();
});

/** The document as a reader sees it after the cache is dropped (a fresh build at the current clock). */
async function fresh(): Promise<any> {
  await gw.ingress.deps.status.invalidate();
  const res = await gw.call("/api/status.php");
  expect(res.status).toBe(200);
  return res.body;
}

async function advance(seconds: number): Promise<void> {
  expect((await gw.admin("POST", "/clock", { advance_s: seconds })).status).toBe(200);
}

/** Known checks `agoS` seconds before now, one minute apart. */
async function seedChecks(service: ServiceKey, outcomes: { ok: boolean; ms: number }[], agoS: number): Promise<void> {
  const start = gw.ctx.clock.now() - agoS * 1000;
  for (const [i, o] of outcomes.entries()) {
    const at = start + i * 60_000;
    await insertCheck(gw.ctx.db, {
      service,
      slotMs: at,
      atMs: at,
      ok: o.ok,
      latencyMs: o.ms,
      statusCode: o.ok ? 200 : 503,
      error: o.ok ? null : "status 503",
    });
  }
}

describe("GET /status on a fresh install", () => {
  it("says no service is monitored yet, once per card, instead of all systems operational", async () => {
    const html = await (await fetch(`${gw.url}/status`)).text();
    expect(html).toContain("No services monitored yet");
    expect(html).not.toContain("All systems operational");
    expect(html.split("Not monitored").length - 1).toBe(3);
  });
});

describe("GET /api/status.php", () => {
  it("answers every field of 2.9 with CORS, caching headers and an ETag; 304 on a match; HEAD too", async () => {
    const res = await gw.call("/api/status.php");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(Object.keys(res.body).sort()).toEqual(["components", "incidents", "maintenance", "page", "status", "uptime_30d"]);
    // A fresh install monitors nothing: the words say so rather than "All systems operational".
    expect(res.body.status).toEqual({ indicator: "ok", description: "No services monitored yet" });
    expect(res.body.components.map((c: any) => [c.key, c.name, c.status])).toEqual([
      ["website", "Website", "not_configured"],
      ["api", "API", "not_configured"],
      ["dashboard", "Dashboard", "not_configured"],
    ]);
    expect(res.body.incidents).toEqual({ open: [], recent: [] });
    expect(res.body.maintenance).toEqual({ in_progress: [], upcoming: [] });
    expect(res.body.page).toMatchObject({ name: "Gateway status", url: `${gw.url}/status`, feed_url: `${gw.url}/status/feed.atom` });
    expect(res.body.page.generated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body.uptime_30d).toEqual({
      overall_pct: null,
      checks: 0,
      services: {
        website: { name: "Website", uptime_pct: null, checks: 0, typical_ms: null },
        api: { name: "API", uptime_pct: null, checks: 0, typical_ms: null },
        dashboard: { name: "Dashboard", uptime_pct: null, checks: 0, typical_ms: null },
      },
    });
    const again = await gw.call("/api/status.php", { headers: { "if-none-match": etag as string } });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
    const head = await fetch(`${gw.url}/api/status.php`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    expect(await head.text()).toBe("");
  });

  it.each(["POST", "PUT", "PATCH", "DELETE"])("%s is 405 with Allow: GET", async (method) => {
    const res = await gw.call("/api/status.php", { method, body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toMatch(/^GET\b/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.body).toEqual({ ok: false, reason: "method_not_allowed", message: expect.any(String) });
  });

  it("computes uptime_30d from known checks: share of successes, check counts, median latency; older checks left out", async () => {
    await upsertService(gw.ctx.db, "website", "Marketing site", null, gw.ctx.clock.now());
    await upsertService(gw.ctx.db, "api", "API", null, gw.ctx.clock.now());
    await seedChecks(
      "website",
      [
        ...Array.from({ length: 97 }, (_, i) => ({ ok: true, ms: 100 + i })), // medians of 100..196 → 148
        { ok: false, ms: 5000 },
        { ok: false, ms: 5000 },
        { ok: false, ms: 5000 },
      ],
      10 * DAY_S,
    );
    await seedChecks(
      "api",
      [
        { ok: true, ms: 40 },
        { ok: true, ms: 60 },
        { ok: false, ms: 10 },
        { ok: true, ms: 50 },
      ],
      5 * DAY_S,
    );
    await seedChecks(
      "api",
      [
        { ok: false, ms: 1 },
        { ok: false, ms: 1 },
      ],
      31 * DAY_S,
    );
    const doc = await fresh();
    expect(doc.uptime_30d.services.website).toEqual({ name: "Marketing site", uptime_pct: 97, checks: 100, typical_ms: 148 });
    expect(doc.uptime_30d.services.api).toEqual({ name: "API", uptime_pct: 75, checks: 4, typical_ms: 50 });
    expect(doc.uptime_30d.services.dashboard).toEqual({ name: "Dashboard", uptime_pct: null, checks: 0, typical_ms: null });
    expect(doc.uptime_30d.checks).toBe(104);
    expect(doc.uptime_30d.overall_pct).toBe(Math.round((100 / 104) * 100_000) / 1000);
  });

  it("indicator precedence: outage > degraded > maintenance > ok, incidents by impact", async () => {
    const now = () => new Date(gw.ctx.clock.now()).toISOString();
    const inHour = new Date(gw.ctx.clock.now() + 3_600_000).toISOString();
    const m = await gw.admin("POST", "/status/maintenance", { title: "DB upgrade", starts_at: now(), ends_at: inHour });
    expect(m.status).toBe(201);
    expect((await fresh()).status.indicator).toBe("maintenance");
    const minor = await gw.admin("POST", "/status/incidents", { title: "Slow API", impact: "minor", body: "Looking" });
    expect((await fresh()).status).toEqual({ indicator: "degraded", description: "Some systems are degraded" });
    const major = await gw.admin("POST", "/status/incidents", { title: "API down", impact: "major", body: "Down" });
    expect((await fresh()).status.indicator).toBe("down");
    await gw.admin("POST", `/status/incidents/${major.body.incident.id}/updates`, { status: "resolved", body: "Fixed" });
    expect((await fresh()).status.indicator).toBe("degraded");
    // A component in outage (three failures in a row, just now) beats the minor incident.
    await upsertService(gw.ctx.db, "dashboard", "Dashboard", "http://127.0.0.1:9/", gw.ctx.clock.now());
    await seedChecks(
      "dashboard",
      [
        { ok: false, ms: 1 },
        { ok: false, ms: 1 },
        { ok: false, ms: 1 },
      ],
      180,
    );
    const doc = await fresh();
    expect(doc.components.find((c: any) => c.key === "dashboard").status).toBe("outage");
    expect(doc.status.indicator).toBe("down");
    await gw.admin("POST", `/status/incidents/${minor.body.incident.id}/updates`, { status: "resolved", body: "Fixed" });
    await gw.admin("POST", `/status/maintenance/${m.body.maintenance.id}/cancel`);
    await upsertService(gw.ctx.db, "dashboard", "Dashboard", null, gw.ctx.clock.now());
    expect((await fresh()).status.indicator).toBe("ok");
  });

  it("maintenance moves from upcoming to in progress to gone as the clock passes its window", async () => {
    const base = gw.ctx.clock.now();
    const created = await gw.admin("POST", "/status/maintenance", {
      title: "Network",
      body: "Switch swap",
      affects: ["api"],
      starts_at: new Date(base + 3_600_000).toISOString(),
      ends_at: new Date(base + 7_200_000).toISOString(),
    });
    const id = created.body.maintenance.id;
    let doc = await fresh();
    expect(doc.maintenance.upcoming.map((w: any) => w.id)).toContain(id);
    expect(doc.maintenance.upcoming.find((w: any) => w.id === id)).toEqual({
      id,
      title: "Network",
      body: "Switch swap",
      affects: ["api"],
      starts_at: new Date(base + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      ends_at: new Date(base + 7_200_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
    expect(doc.maintenance.in_progress).toEqual([]);
    await advance(3_600);
    doc = (await gw.call("/api/status.php")).body; // the clock moved a minute or more: the cache rebuilt on its own
    expect(doc.maintenance.in_progress.map((w: any) => w.id)).toEqual([id]);
    expect(doc.maintenance.upcoming).toEqual([]);
    expect(doc.status.indicator).toBe("maintenance");
    await advance(3_600);
    doc = (await gw.call("/api/status.php")).body;
    expect(doc.maintenance).toEqual({ in_progress: [], upcoming: [] });
  });

  it("shows open incidents, and resolved ones for 14 days; updates newest first", async () => {
    const created = await gw.admin("POST", "/status/incidents", {
      title: "Login errors",
      impact: "minor",
      affects: ["dashboard"],
      body: "Investigating",
    });
    const id = created.body.incident.id;
    await advance(600);
    await gw.admin("POST", `/status/incidents/${id}/updates`, { status: "identified", body: "Bad deploy" });
    let doc = await fresh();
    const open = doc.incidents.open.find((i: any) => i.id === id);
    expect(open).toMatchObject({
      title: "Login errors",
      impact: "minor",
      status: "identified",
      affects: ["dashboard"],
      resolved_at: null,
      postmortem: null,
    });
    expect(open.updates.map((u: any) => u.status)).toEqual(["identified", "investigating"]);
    await gw.admin("POST", `/status/incidents/${id}/updates`, { status: "resolved", body: "Rolled back" });
    await gw.admin("PATCH", `/status/incidents/${id}`, { postmortem: "A config flag." });
    doc = await fresh();
    expect(doc.incidents.open.find((i: any) => i.id === id)).toBeUndefined();
    expect(doc.incidents.recent.find((i: any) => i.id === id)).toMatchObject({ status: "resolved", postmortem: "A config flag." });
    await advance(13 * DAY_S + 23 * 3600);
    expect((await fresh()).incidents.recent.map((i: any) => i.id)).toContain(id);
    await advance(3600 + 60);
    expect((await fresh()).incidents.recent.map((i: any) => i.id)).not.toContain(id);
  });

  it("builds the document once for 1000 concurrent readers, across two ingress processes' caches", async () => {
    await gw.ingress.deps.status.invalidate();
    const before = gw.ingress.deps.status.builds();
    const readers = await Promise.all(
      Array.from({ length: 1000 }, () =>
        fetch(`${gw.url}/api/status.php`).then(async (r) => ({ status: r.status, etag: r.headers.get("etag") })),
      ),
    );
    expect(readers.every((r) => r.status === 200)).toBe(true);
    expect(new Set(readers.map((r) => r.etag)).size).toBe(1);
    expect(gw.ingress.deps.status.builds() - before).toBe(1);

    // A second process's cache on the same Redis: together they still build once per minute.
    const other = createStatusCache({
      ...gw.ctx,
      options: () => ({ siteUrl: gw.url, pageName: "Gateway status", probeIntervalS: 60, slowMs: 2000 }),
    });
    await advance(61);
    const mine = gw.ingress.deps.status.builds();
    const both = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? other.current() : gw.ingress.deps.status.current())),
    );
    expect(new Set(both.map((c) => c.etag)).size).toBeLessThanOrEqual(2); // stale readers may get the previous copy
    expect(gw.ingress.deps.status.builds() - mine + other.builds()).toBe(1);
    const after = await Promise.all([other.current(), gw.ingress.deps.status.current()]);
    expect(after[0].etag).toBe(after[1].etag);
  });
});
