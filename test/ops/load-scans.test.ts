/**
 * The scan and assignment part of `npm run load`: the loopback DNS and web servers it
 * starts are enough for a real scan through scan.php and the scanner actor (no other
 * traffic), the first scan reports findings, and the change bodies the run rotates through
 * are changes assignments.php accepts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../actors/index.js";
import { startScanner } from "../../actors/scanner/job/index.js";
import { scanDomains, startScanTargets, type ScanTargets } from "../../ops/load/scan-targets.js";
import { changeBodies, firstScans, seedScanOrgs, type ScanTarget } from "../../ops/load/seed-scans.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";

let targets: ScanTargets;
let gw: TestGateway;
let scanner: RunningActor;
let dir: string;

beforeAll(async () => {
  targets = await startScanTargets(scanDomains(2), Date.now());
  dir = mkdtempSync(join(tmpdir(), "load-ca-"));
  writeFileSync(join(dir, "ca.pem"), targets.caPem);
  gw = await startTestGateway("loadscans", {
    DNS_RESOLVER: targets.resolver,
    SCAN_ALLOW_PRIVATE: "1",
    SCAN_HTTP_PORT: String(targets.httpPort),
    SCAN_HTTPS_PORT: String(targets.httpsPort),
    SCAN_CA_FILE: join(dir, "ca.pem"),
  });
  scanner = await startScanner(gw.ctx);
});

afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
  await targets?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the load tool's scans and assignment changes", () => {
  let scanned: ScanTarget[];

  it("scans every load domain on loopback and finds what the fixture gets wrong", async () => {
    const orgs = await seedScanOrgs(gw.ctx.db, scanDomains(2), gw.ctx.clock.now());
    await gw.ingress.deps.projector.rebuildAll();
    scanned = await firstScans(gw.url, orgs);
    expect(scanned.map((t) => t.domain)).toEqual(["scan-1.test", "scan-2.test"]);
    for (const target of scanned) {
      // SPF "+all", no DMARC, no HSTS: the findings the changes name.
      expect(target.findings).toEqual(expect.arrayContaining(["mail:spf", "mail:dmarc", "tls:hsts"]));
    }
    // The web scan reached the HTTPS server through the run's CA: the certificate checks pass.
    const res = await gw.call("/api/v1/scan.php", { query: { key: scanned[0].key, domain: "scan-1.test" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const status = (id: string) => res.body.web.findings.find((f: { id: string }) => f.id === id)?.status;
    expect(status("tls:certificate")).toBe("pass");
    expect(status("tls:version")).toBe("pass");
  });

  it("sends changes assignments.php accepts, each moving owner, status and due", async () => {
    const bodies = changeBodies(scanned, gw.ctx.clock.now());
    expect(bodies).toHaveLength(6 * scanned.length);
    for (const body of bodies.slice(0, 2 * scanned.length)) {
      const sent = JSON.parse(body) as Record<string, string>;
      const res = await gw.call("/api/v1/assignments.php", { method: "POST", body: sent });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.assignment).toMatchObject({ status: sent.status, due_at: sent.due });
      expect(JSON.stringify(res.body.assignment)).toContain(sent.owner);
    }
  });
});
