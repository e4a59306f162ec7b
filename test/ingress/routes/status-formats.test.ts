import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/** Debian's python3-feedparser and the standard XML parser judge the feed and the badge (.ci/run installs them). */
const PYTHON = "/usr/bin/python3";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("statusformats");
  const now = gw.ctx.clock.now();
  await gw.admin("PUT", "/status/services/website", { name: "Website", url: "https://www.example.com/" });
  const incident = await gw.admin("POST", "/status/incidents", {
    title: "Errors <&> on login",
    impact: "major",
    affects: ["website"],
    body: "Looking & fixing",
  });
  await gw.admin("POST", `/status/incidents/${incident.body.incident.id}/updates`, { status: "identified", body: "Found it" });
  await gw.admin("POST", "/status/maintenance", {
    title: "Upgrade",
    body: "Database",
    starts_at: new Date(now + 3_600_000).toISOString(),
    ends_at: new Date(now + 7_200_000).toISOString(),
  });
});
afterAll(async () => {
  await gw?.stop();
});

function python(script: string, input: string): any {
  return JSON.parse(execFileSync(PYTHON, ["-c", script], { input, encoding: "utf8" }));
}

describe("status formats", () => {
  it("the Atom feed parses with feedparser: ids, updated, entries with content, linked from the document", async () => {
    const doc = (await gw.call("/api/status.php")).body;
    expect(doc.page.feed_url).toBe(`${gw.url}/status/feed.atom`);
    const res = await fetch(doc.page.feed_url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/atom\+xml/);
    const parsed = python(
      `
import sys, json, feedparser
f = feedparser.parse(sys.stdin.read())
print(json.dumps({"bozo": f.bozo, "version": f.version, "title": f.feed.get("title"), "id": f.feed.get("id"), "updated": f.feed.get("updated"),
  "entries": [{"id": e.get("id"), "title": e.get("title"), "updated": e.get("updated"), "content": e.content[0].value if e.get("content") else None} for e in f.entries]}))
`,
      await res.text(),
    );
    expect(parsed.bozo).toBeFalsy();
    expect(parsed.version).toBe("atom10");
    expect(parsed.id).toBe(doc.page.feed_url);
    expect(parsed.updated).toMatch(/Z$/);
    expect(parsed.entries).toHaveLength(2);
    const incident = parsed.entries.find((e: any) => e.id.includes("#incident-"));
    expect(incident.title).toBe("Errors <&> on login");
    expect(incident.content).toContain("Found it");
    expect(incident.content).toContain("Looking &amp; fixing");
    expect(parsed.entries.find((e: any) => e.id.includes("#maintenance-")).title).toBe("Maintenance: Upgrade");
  });

  it.each([
    ["en", "outage"],
    ["fr", "panne"],
    ["de", "Ausfall"],
    ["es", "caída"],
    ["xx", "outage"],
    ["fr-CA", "panne"],
  ])("the badge in %s is valid SVG with a <title> saying %s", async (lang, word) => {
    const res = await gw.call("/status-badge.php", { query: { lang } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeLessThanOrEqual(60);
    const svg = python(
      `
import sys, json, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read().encode("utf-8"))
ns = "{http://www.w3.org/2000/svg}"
print(json.dumps({"tag": root.tag, "title": root.find(ns + "title").text, "texts": [t.text for t in root.iter(ns + "text")], "role": root.get("role")}))
`,
      res.body as string,
    );
    expect(svg.tag).toBe("{http://www.w3.org/2000/svg}svg");
    expect(svg.role).toBe("img");
    expect(svg.title).toContain(word);
    expect(svg.texts).toContain(word);
  });

  it("summary.json has the Statuspage shape", async () => {
    const res = await gw.call("/status/summary.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = res.body;
    expect(Object.keys(body).sort()).toEqual(["components", "incidents", "page", "scheduled_maintenances", "status"]);
    expect(body.status).toEqual({ indicator: "major", description: "Major Service Outage" });
    expect(body.page).toMatchObject({ id: expect.any(String), name: "Gateway status", url: `${gw.url}/status`, time_zone: "Etc/UTC" });
    expect(body.components.map((c: any) => [c.id, c.status])).toEqual([["website", "operational"]]);
    expect(body.incidents[0]).toMatchObject({ name: "Errors <&> on login", status: "identified", impact: "major", resolved_at: null });
    expect(body.incidents[0].incident_updates.map((u: any) => u.status)).toEqual(["identified", "investigating"]);
    expect(body.incidents[0].components.map((c: any) => c.id)).toEqual(["website"]);
    expect(body.scheduled_maintenances[0]).toMatchObject({ name: "Upgrade", status: "scheduled", impact: "maintenance" });
    expect(body.scheduled_maintenances[0].scheduled_for).toMatch(/Z$/);
  });

  it("the report answers the current quarter by default and 400 bad_quarter for a bad or future one", async () => {
    const now = new Date(gw.ctx.clock.now());
    const label = `${now.getUTCFullYear()}-Q${Math.floor(now.getUTCMonth() / 3) + 1}`;
    const res = await gw.call("/status/report");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.body).toContain(`quarterly report ${label}`);
    expect(res.body).toContain("Errors &lt;&amp;&gt; on login");
    expect((await gw.call("/status/report", { query: { quarter: "2024-Q2" } })).body).toContain("No incidents this quarter.");
    for (const quarter of ["2026-Q5", "2026Q1", "Q1-2026", "1999-Q4", `${now.getUTCFullYear() + 1}-Q1`]) {
      const bad = await gw.call("/status/report", { query: { quarter } });
      expect(bad.status, quarter).toBe(400);
      expect(bad.body).toMatchObject({ ok: false, reason: "bad_quarter" });
    }
  });

  it("the human page is HTML with no script and no external asset, linking the feed, report and badge", async () => {
    const res = await gw.call("/status");
    expect(res.status).toBe(200);
    const html = res.body as string;
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!127\.0\.0\.1)/);
    for (const link of ["/status/feed.atom", "/status/report", "/status-badge.php"]) expect(html).toContain(`${gw.url}${link}`);
    expect(html).toContain("Errors &lt;&amp;&gt; on login");
    expect((await gw.call("/status", { method: "POST", body: {} })).status).toBe(405);
  });

  it("the human page is served under a CSP that fits what it loads, with nosniff, and so is its 304", async () => {
    const res = await gw.call("/status");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp.split(/;\s*/)).toEqual(
      expect.arrayContaining(["default-src 'none'", "style-src 'unsafe-inline'", "img-src 'self' data:", "frame-ancestors 'none'"]),
    );
    expect(csp).not.toMatch(/script-src|connect-src/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    // What the policy allows is all the page uses: inline styles, no script, frame, object or remote stylesheet.
    const html = res.body as string;
    expect(html).toMatch(/<style>/);
    expect(html).not.toMatch(/<script|<iframe|<object|<embed|<img|rel="stylesheet"|@import|url\(/i);
    const again = await gw.call("/status", { headers: { "if-none-match": res.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
    expect(again.headers.get("content-security-policy")).toBe(csp);
    // The other formats are not HTML: nosniff, and no page policy.
    for (const path of ["/api/status.php", "/status/feed.atom", "/status-badge.php", "/status/summary.json"]) {
      const other = await gw.call(path);
      expect(other.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(other.headers.get("content-security-policy"), path).toBeNull();
    }
  });
});
