/**
 * One organization's site cannot stall another organization's scans, nor fill the
 * database (docs/security.md, Scanner isolation). The scanner runs as its own process,
 * as in production; the sites are the fixture servers: hostile.test serves 1 MiB of
 * unclosed `<!--`, scripts.test 20,000 cross-origin scripts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DETAIL_MAX_CHARS, EVIDENCE_MAX_CHARS } from "../../../actors/scanner/bounds.js";
import { HTML_LIMIT } from "../../../actors/scanner/records/html.js";
import { SCAN_STREAM } from "../../../shared/scans/stream.js";
import { startDnsServer, type FixtureDns } from "../../fixtures/scanner/dns-server.js";
import { startWebServers, type FixtureWeb } from "../../fixtures/scanner/web-servers.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain } from "./verify-fixtures.js";

let dns: FixtureDns;
let web: FixtureWeb;
let gw: TestGateway;
let scanner: ChildProcess;
let hostileKey: string;
let otherKey: string;
let hostileOrg: number;

beforeAll(async () => {
  dns = await startDnsServer();
  web = await startWebServers();
  const dir = mkdtempSync(join(tmpdir(), "scan-iso-ca-"));
  writeFileSync(join(dir, "ca.pem"), web.caPem);
  gw = await startTestGateway("scaniso", {
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_ALLOW_PRIVATE: "1",
    SCAN_HTTP_PORT: String(web.httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
    SCAN_CA_FILE: join(dir, "ca.pem"),
  });
  hostileOrg = await makeOrg(gw, { plan: "professional" });
  for (const domain of ["hostile.test", "scripts.test"]) await verifyDomain(gw, hostileOrg, domain);
  hostileKey = (await makeKey(gw, hostileOrg, { name: "A", kind: "server", domain: undefined })).key;
  const otherOrg = await makeOrg(gw, { plan: "professional" });
  await verifyDomain(gw, otherOrg, "good.test");
  otherKey = (await makeKey(gw, otherOrg, { name: "B", kind: "server", domain: undefined })).key;
  // Built code, as `npm test` runs it (pretest builds).
  scanner = spawn(process.execPath, ["dist/ops/start.js", "actor", "scanner"], { env: { ...process.env, ...gw.env }, stdio: "ignore" });
});

afterAll(async () => {
  if (scanner && scanner.exitCode === null) {
    const exited = new Promise((resolve) => scanner.once("exit", resolve));
    scanner.kill("SIGTERM");
    // A scanner stuck in a synchronous loop never runs its SIGTERM handler.
    const stuck = setTimeout(() => scanner.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(stuck);
  }
  await gw?.stop();
  await web?.stop();
  await dns?.stop();
});

const postScan = (key: string, domain: string) => gw.call("/api/v1/scan.php", { method: "POST", body: { key, domain } });

async function scanJobsInHand(): Promise<number> {
  const summary = (await gw.ctx.redis.xpending(gw.ctx.keys.stream(SCAN_STREAM), "scanner").catch(() => [0])) as unknown[];
  return Number(summary[0]);
}

describe("scanner isolation", () => {
  it("another organization's scan completes while a 1 MiB hostile page is scanned", async () => {
    const hostile = postScan(hostileKey, "hostile.test");
    await waitFor(async () => (await scanJobsInHand()) >= 1, 20_000);
    const other = await postScan(otherKey, "good.test");
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.web.grade).toBeTypeOf("string");
    // The hostile page itself is scanned too; its HTML checks say how much was examined.
    const answer = await hostile;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const sri = answer.body.web.findings.find((f: { id: string }) => f.id === "content:sri");
    expect(sri.detail).toContain(`Only the first ${HTML_LIMIT} characters of the page were examined.`);
  }, 90_000);

  it("stores bounded findings for a page of 20,000 scripts", async () => {
    const answer = await postScan(hostileKey, "scripts.test");
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const sri = answer.body.web.findings.find((f: { id: string }) => f.id === "content:sri");
    expect(sri.result).toBe("sri-missing");
    expect(sri.detail).toMatch(/… and \d+ more\./);
    const { rows } = await gw.ctx.db.query(
      `SELECT max(length(f.detail)) AS detail, max(length(f.evidence)) AS evidence, sum(length(f.detail) + length(f.evidence)) AS total
       FROM findings f JOIN scans s ON s.id = f.scan_id WHERE s.org_id = $1 AND s.domain = 'scripts.test'`,
      [hostileOrg],
    );
    expect(Number(rows[0].detail)).toBeLessThanOrEqual(DETAIL_MAX_CHARS);
    expect(Number(rows[0].evidence)).toBeLessThanOrEqual(EVIDENCE_MAX_CHARS);
    // Both sections of the scan, every finding: tens of kilobytes at most, not megabytes.
    expect(Number(rows[0].total)).toBeLessThan(64 * 1024);
  }, 90_000);
});
