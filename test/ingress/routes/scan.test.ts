import { spawn } from "node:child_process";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScanner } from "../../../actors/scanner/job/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startDnsServer, type FixtureDns } from "../../fixtures/scanner/dns-server.js";
import { startWebServers, type FixtureWeb } from "../../fixtures/scanner/web-servers.js";
import { scanRoute } from "../../../ingress/routes/scan.js";
import { refundFault } from "../../../ingress/routes/refund.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { makeKey, makeOrg, usedOf, verifyDomain } from "./verify-fixtures.js";
import { usageEvents } from "./content-fixtures.js";

let dns: FixtureDns;
let web: FixtureWeb;
let gw: TestGateway;
let scanner: RunningActor;
let orgId: number;
let serverKey: string;

beforeAll(async () => {
  dns = await startDnsServer();
  web = await startWebServers();
  const dir = mkdtempSync(join(tmpdir(), "scan-ca-"));
  writeFileSync(join(dir, "ca.pem"), web.caPem);
  gw = await startTestGateway("scan", {
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_ALLOW_PRIVATE: "1",
    SCAN_HTTP_PORT: String(web.httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
    SCAN_CA_FILE: join(dir, "ca.pem"),
  });
  gw.env.LOG_LEVEL = "silent";
  scanner = await startScanner(gw.ctx);
  orgId = await makeOrg(gw, { plan: "professional" });
  for (const domain of ["good.test", "bad.test", "spf11.test"]) await verifyDomain(gw, orgId, domain);
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "unverified.test" });
  serverKey = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
});

afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
  await web?.stop();
  await dns?.stop();
});

const scan = (method: "GET" | "POST", body: Record<string, unknown>) =>
  gw.call("/api/v1/scan.php", method === "GET" ? { method, query: body as Record<string, string> } : { method, body });

describe("scan.php", () => {
  it("GET before any scan is 404 no_scan, with the rate-limit headers", async () => {
    const res = await scan("GET", { key: serverKey, domain: "good.test" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ ok: false, reason: "no_scan", message: expect.any(String) });
    expect(res.headers.get("x-ratelimit-limit")).toBe("10");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("10");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(gw.ctx.clock.nowSeconds());
  });

  it("POST runs a fresh scan; the good domain grades strictly better than the bad one", async () => {
    const good = await scan("POST", { key: serverKey, domain: "good.test" });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(good.body).toMatchObject({ ok: true, fresh: true, domain: "good.test" });
    const bad = await scan("POST", { key: serverKey, domain: "bad.test" });
    expect(bad.status).toBe(200);
    for (const kind of ["web", "dns"] as const) {
      const g = good.body[kind];
      const b = bad.body[kind];
      expect(typeof g.grade).toBe("string");
      expect(g.score).toBeGreaterThan(b.score);
      expect(b.fail_count).toBeGreaterThan(g.fail_count);
      for (const finding of g.findings) {
        expect(finding).toMatchObject({ acknowledged: false });
        expect(Object.keys(finding)).toEqual(expect.arrayContaining(["id", "group", "label", "status", "summary", "detail", "evidence"]));
        expect(finding.id.startsWith(`${finding.group}:`)).toBe(true);
      }
    }
    expect(good.headers.get("x-ratelimit-remaining")).toBe("9");
    expect(bad.headers.get("x-ratelimit-remaining")).toBe("8");
  });

  it("GET returns the stored scan without new traffic (fresh:false)", async () => {
    const before = dns.queries.length;
    const res = await scan("GET", { key: serverKey, domain: "good.test" });
    expect(res.status).toBe(200);
    expect(res.body.fresh).toBe(false);
    expect(res.body.web.grade).toBeTypeOf("string");
    expect(dns.queries.length).toBe(before);
  });

  it("stores scan.completed events, one per kind", async () => {
    const { rows } = await gw.ctx.db.query("SELECT type, payload FROM events WHERE org_id = $1 AND domain = 'good.test' ORDER BY id", [
      orgId,
    ]);
    expect(
      rows
        .filter((r) => r.type === "scan.completed")
        .map((r) => r.payload.kind)
        .sort(),
    ).toEqual(["dns", "web"]);
  });

  it("an accepted risk shows as acknowledged; released it does not", async () => {
    const res = await scan("GET", { key: serverKey, domain: "bad.test" });
    const failing = res.body.dns.findings.find((f: { status: string }) => f.status === "fail");
    const expires = new Date(gw.ctx.clock.now() + 86400_000).toISOString();
    const accepted = await gw.admin("POST", `/orgs/${orgId}/risks`, {
      domain: "bad.test",
      finding_key: failing.id,
      note: "known",
      expires_at: expires,
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const after = await scan("GET", { key: serverKey, domain: "bad.test" });
    const acked = after.body.dns.findings.find((f: { id: string }) => f.id === failing.id);
    expect(acked.acknowledged).toBe(true);
    expect(acked.acknowledgement).toMatchObject({ note: "known", expired: false });
    await gw.admin("POST", "/clock", { advance_s: 2 * 86400 });
    const expired = (await scan("GET", { key: serverKey, domain: "bad.test" })).body.dns.findings.find(
      (f: { id: string }) => f.id === failing.id,
    );
    expect(expired.acknowledged).toBe(false);
    expect(expired.acknowledgement.expired).toBe(true);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/risks/bad.test/${failing.id}`)).status).toBe(200);
    const released = (await scan("GET", { key: serverKey, domain: "bad.test" })).body.dns.findings.find(
      (f: { id: string }) => f.id === failing.id,
    );
    expect(released.acknowledgement).toBeUndefined();
  });

  it("list=1 gives every verified domain with its latest grades or null", async () => {
    const res = await scan("GET", { key: serverKey, domain: "good.test", list: "1" });
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.domains.map((d: { domain: string }) => [d.domain, d]));
    expect(Object.keys(byName).sort()).toEqual(["bad.test", "good.test", "spf11.test"]);
    expect(byName["good.test"].web).toBeTypeOf("string");
    expect(byName["spf11.test"]).toEqual({ domain: "spf11.test", web: null, dns: null, active: null });
  });

  it("history=1 gives the series oldest first", async () => {
    await scan("POST", { key: serverKey, domain: "good.test" });
    const res = await scan("GET", { key: serverKey, domain: "good.test", history: "1" });
    expect(res.status).toBe(200);
    expect(res.body.history.web).toHaveLength(2);
    expect(res.body.history.dns).toHaveLength(2);
    expect(res.body.history.active).toEqual([]);
    const [a, b] = res.body.history.web;
    expect(Object.keys(a).sort()).toEqual(["at", "fail_count", "grade", "score"]);
    expect(Date.parse(a.at)).toBeLessThanOrEqual(Date.parse(b.at));
  });

  it("detects a regression between two scans", async () => {
    // Two scans of the same domain, the second with a worse DNS answer: make spf11.test's
    // previous scan look better by storing it, then rescan.
    const first = await scan("POST", { key: serverKey, domain: "spf11.test" });
    expect(first.status).toBe(200);
    await gw.ctx.db.query(
      `UPDATE findings SET status = 'pass' WHERE scan_id = (SELECT id FROM scans WHERE org_id = $1 AND domain = 'spf11.test' AND kind = 'dns' ORDER BY id DESC LIMIT 1)`,
      [orgId],
    );
    await scan("POST", { key: serverKey, domain: "spf11.test" });
    const { rows } = await gw.ctx.db.query(
      "SELECT payload FROM events WHERE org_id = $1 AND type = 'scan.regression' AND domain = 'spf11.test'",
      [orgId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].payload.new_issues).toContain("mail:spf-lookups");
  });

  it("refuses client keys, unverified and mismatched domains", async () => {
    const client = await makeKey(gw, orgId, { name: "Site", kind: "client", domain: "good.test" });
    const res = await scan("GET", { key: client.key, domain: "good.test" });
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe("server_key_required");
    const unverified = await scan("GET", { key: serverKey, domain: "unverified.test" });
    expect(unverified.body.reason).toBe("domain_not_verified");
    const locked = await makeKey(gw, orgId, { name: "Locked", kind: "server", domain: "good.test" });
    const mismatch = await scan("GET", { key: locked.key, domain: "bad.test" });
    expect(mismatch.body.reason).toBe("domain_mismatch");
    expect(mismatch.headers.get("x-ratelimit-limit")).toBe("10");
    expect((await scan("GET", { key: serverKey })).body.reason).toBe("missing_domain");
    expect((await scan("GET", { key: "sk_live_nope", domain: "good.test" })).body).toEqual({
      ok: false,
      reason: "invalid_key",
      message: expect.any(String),
    });
  });

  it("allows 10 fresh scans per hour per organization, then 429 scan_rate_limited", async () => {
    const org2 = await makeOrg(gw, { plan: "professional" });
    await verifyDomain(gw, org2, "good.test");
    const key2 = (await makeKey(gw, org2, { name: "B", kind: "server", domain: undefined })).key;
    const results = await Promise.all(Array.from({ length: 12 }, () => scan("POST", { key: key2, domain: "good.test" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(2);
    expect(limited[0].body.reason).toBe("scan_rate_limited");
    expect(limited[0].headers.get("x-ratelimit-remaining")).toBe("0");
    await gw.admin("POST", "/clock", { advance_s: 3600 });
    expect((await scan("POST", { key: key2, domain: "good.test" })).status).toBe(200);
  });

  it("times out into a 5xx, never a hang, when no scanner answers", async () => {
    await scanner.stop();
    try {
      const org3 = await makeOrg(gw, { plan: "professional" });
      await verifyDomain(gw, org3, "good.test");
      const key3 = (await makeKey(gw, org3, { name: "C", kind: "server", domain: undefined })).key;
      const request = {
        method: "POST",
        path: "/api/v1/scan.php",
        query: "",
        headers: {},
        headerOrder: [],
        remoteAddress: "127.0.0.1",
        body: Buffer.from(JSON.stringify({ key: key3, domain: "good.test" })),
        requestId: "t",
        startedMs: performance.now(),
      };
      const reply = await scanRoute(300)(request, gw.ingress.deps);
      // What the route wrapper (app.ts) does with every answer of a charged call.
      await refundFault(gw.ingress.deps, request, reply);
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({ ok: false, reason: "timeout", message: expect.any(String) });
      // The service's own fault is not charged (interface.md 8; docs/security.md, item 11a):
      // the count is taken back and the usage record moves the call to `timeout`, uncounted.
      expect(await usedOf(gw, org3)).toBe(0);
      const events = await usageEvents(gw, org3);
      expect(events.map((e) => [e.endpoint, e.reason, e.counted, e.n, (e as { refund?: number }).refund ?? 0])).toEqual([
        ["scan", "ok", 1, 1, 0],
        ["scan", "timeout", 0, 1, 1],
      ]);
    } finally {
      scanner = await startScanner(gw.ctx);
    }
  });

  // Timing is the bench's business (it flakes on a loaded CI); this checks verify keeps answering correctly.
  it("20 scans queued at once complete while verify keeps answering", async () => {
    // Two organizations: 20 fresh scans are more than one organization's hourly budget.
    const backends: string[] = [];
    let site = "";
    for (const name of ["D", "E"]) {
      const org = await makeOrg(gw, { plan: "enterprise" });
      for (const d of ["good.test", "bad.test", "example.com"]) await verifyDomain(gw, org, d);
      backends.push((await makeKey(gw, org, { name, kind: "server", domain: undefined })).key);
      site = (await makeKey(gw, org, { name: `${name}-site`, kind: "client", domain: "example.com", rate_per_minute: 100000 })).key;
    }
    // The scanner runs as its own process, as in production: stop the in-process one.
    await scanner.stop();
    const child = spawn(process.execPath, ["dist/ops/start.js", "actor", "scanner"], {
      env: { ...process.env, ...gw.env },
      stdio: "ignore",
    });
    const scans = Array.from({ length: 20 }, (_, i) =>
      scan("POST", { key: backends[i % 2], domain: i % 4 < 2 ? "good.test" : "bad.test" }),
    );
    let done = false;
    let answered = 0;
    const all = Promise.all(scans).finally(() => {
      done = true;
    });
    while (!done) {
      const v = await gw.call("/api/v1/verify.php", { body: { key: site, domain: "example.com" } });
      expect(v.body.authorized).toBe(true);
      answered++;
    }
    const results = await all;
    child.kill("SIGTERM");
    scanner = await startScanner(gw.ctx);
    expect(results.filter((r) => r.status === 200).length).toBe(20);
    expect(answered).toBeGreaterThan(0);
  }, 60_000);
});
