/**
 * One domain syntax for the admin API and the scanner: a verified `_x.example.com` (the
 * admin API accepts a leading underscore label) must scan, not fail in the scanner's
 * parser. Through scan.php, the scanner actor and the stored answer.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../../actors/index.js";
import { startScanner } from "../../../../actors/scanner/job/index.js";
import { parseDomain } from "../../../../actors/scanner/scan.js";
import { startDnsServer, type FixtureDns } from "../../../fixtures/scanner/dns-server.js";
import { startWebServers, type FixtureWeb } from "../../../fixtures/scanner/web-servers.js";
import { startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain } from "../../../ingress/routes/verify-fixtures.js";

let dns: FixtureDns;
let web: FixtureWeb;
let gw: TestGateway;
let scanner: RunningActor;

beforeAll(async () => {
  [dns, web] = await Promise.all([startDnsServer(), startWebServers()]);
  const dir = mkdtempSync(join(tmpdir(), "scan-ca-"));
  writeFileSync(join(dir, "ca.pem"), web.caPem);
  gw = await startTestGateway("scanunderscore", {
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_ALLOW_PRIVATE: "1",
    SCAN_HTTP_PORT: String(web.httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
    SCAN_CA_FILE: join(dir, "ca.pem"),
  });
  gw.env.LOG_LEVEL = "silent";
  scanner = await startScanner(gw.ctx);
});

afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
  await Promise.all([web?.stop(), dns?.stop()]);
});

describe("a verified domain with an underscore label", () => {
  it("parses as the admin API accepts it", () => {
    expect(parseDomain("_x.example.com")).toEqual({ ok: true, domain: "_x.example.com" });
    expect(parseDomain("x._y.example.com")).toEqual({ ok: false, reason: "invalid_domain" });
  });

  it("scans through scan.php, and the stored scan answers with results", async () => {
    const orgId = await makeOrg(gw, { plan: "professional" });
    await verifyDomain(gw, orgId, "_x.example.com");
    const key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
    const res = await gw.call("/api/v1/scan.php", { method: "POST", body: { key, domain: "_x.example.com" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ ok: true, fresh: true, domain: "_x.example.com" });
    expect(res.body.dns.findings.find((f: { id: string }) => f.id === "dns:address")).toMatchObject({ result: "address-none" });
    expect(dns.queries).toContain("_x.example.com/1");
  });
});
