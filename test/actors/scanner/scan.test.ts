import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GRADES } from "../../../actors/scanner/grading.js";
import type { Finding, Section } from "../../../actors/scanner/finding.js";
import { defaultScanOptions, type ScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { parseDomain, recheck, runScan, type ScanResult } from "../../../actors/scanner/scan.js";
import { type FixtureDns, startDnsServer } from "../../fixtures/scanner/dns-server.js";
import { type FixtureWeb, startWebServers } from "../../fixtures/scanner/web-servers.js";

let dns: FixtureDns;
let web: FixtureWeb;
const results = new Map<string, { result: ScanResult; wallMs: number }>();

function options(overrides: Partial<ScanOptions> = {}): ScanOptions {
  return defaultScanOptions({
    resolver: { host: dns.host, port: dns.port },
    outbound: outboundPolicy("scan", "all"),
    httpPort: web.httpPort,
    httpsPort: web.httpsPort,
    caPem: web.caPem,
    timeoutMs: 10_000,
    ...overrides,
  });
}

async function scan(domain: string): Promise<ScanResult> {
  const cached = results.get(domain);
  if (cached) return cached.result;
  const started = performance.now();
  const result = await runScan(domain, options(), Date.now());
  results.set(domain, { result, wallMs: performance.now() - started });
  return result;
}

const finding = (section: Section, id: string): Finding | undefined => section.findings.find((f) => f.id === id);
const rank = (grade: string) => GRADES.findIndex(([, g]) => g === grade);

beforeAll(async () => {
  [dns, web] = await Promise.all([startDnsServer(), startWebServers()]);
});
afterAll(async () => {
  await Promise.all([dns?.stop(), web?.stop()]);
});

describe("runScan end to end (fixture DNS and web servers)", () => {
  test("good.test grades strictly better than bad.test in both sections", async () => {
    const [good, bad] = await Promise.all([scan("good.test"), scan("bad.test")]);
    expect(good.dns.score).toBeGreaterThan(bad.dns.score);
    expect(good.web.score).toBeGreaterThan(bad.web.score);
    expect(rank(good.dns.grade)).toBeLessThan(rank(bad.dns.grade));
    expect(rank(good.web.grade)).toBeLessThan(rank(bad.web.grade));
    expect([good.dns.fail_count, good.web.fail_count]).toEqual([0, 0]);
    expect(good.algorithm).toMatch(/\S/);
  });

  test("good.test findings show the controls in place", async () => {
    const good = await scan("good.test");
    expect(finding(good.dns, "mail:spf")?.result).toBe("spf-hardfail");
    expect(finding(good.dns, "mail:dmarc")?.result).toBe("dmarc-reject");
    expect(finding(good.dns, "mail:dkim")?.result).toBe("dkim-found");
    expect(finding(good.dns, "mail:mta-sts")?.result).toBe("mta-sts-enforce");
    expect(finding(good.dns, "dns:dnssec")?.result).toBe("dnssec-validated");
    expect(finding(good.web, "tls:https-redirect")?.result).toBe("redirect-ok");
    expect(finding(good.web, "tls:certificate")?.result).toBe("cert-valid");
    expect(finding(good.web, "tls:hsts")?.result).toBe("hsts-preload-ready");
    expect(finding(good.web, "content:sri")?.result).toBe("sri-ok");
  });

  test("bad.test findings name what is wrong, with evidence", async () => {
    const bad = await scan("bad.test");
    expect(finding(bad.dns, "mail:spf")?.result).toBe("spf-multiple");
    expect(finding(bad.dns, "mail:dmarc")?.result).toBe("dmarc-missing");
    expect(finding(bad.dns, "mail:mx")?.result).toBe("mx-cname");
    expect(finding(bad.web, "headers:server-banner")?.evidence).toContain("server: Apache/2.2.3");
    expect(finding(bad.web, "cookies:secure")?.result).toBe("cookies-session-insecure");
    expect(finding(bad.web, "headers:cors")?.status).toBe("fail");
    expect(finding(bad.web, "content:sri")?.result).toBe("sri-missing");
  });

  test("spf11.test fails the SPF lookup limit", async () => {
    const f = finding((await scan("spf11.test")).dns, "mail:spf-lookups");
    expect([f?.status, f?.result]).toEqual(["fail", "spf-lookups-exceeded"]);
    expect(f?.detail).toContain("11 lookup(s)");
  });

  test("dangling.test flags the dangling CNAME", async () => {
    const f = finding((await scan("dangling.test")).dns, "dns:dangling-cname");
    expect([f?.status, f?.result]).toEqual(["fail", "dangling-found"]);
    expect(f?.detail).toContain("www.dangling.test -> gone-bucket.unclaimed.test");
  });

  test("nodmarc.test has no DMARC; expired.test has an expired certificate; loop.test loops", async () => {
    const [nodmarc, expired, loop] = await Promise.all([scan("nodmarc.test"), scan("expired.test"), scan("loop.test")]);
    expect(finding(nodmarc.dns, "mail:dmarc")?.result).toBe("dmarc-missing");
    expect(finding(expired.web, "tls:certificate")?.result).toBe("cert-expired");
    expect(finding(loop.web, "tls:https-redirect")?.result).toBe("redirect-invalid");
  });

  // How long a scan takes is measured by the bench, not asserted here (wall time flakes on a loaded CI).
  test("each scan reports how long it took", async () => {
    await Promise.all(["good.test", "bad.test", "spf11.test", "dangling.test"].map(scan));
    for (const [domain, { result }] of results) expect(result.durationMs, domain).toBeGreaterThan(0);
  });

  test("under the scan policy without private reach the web scan is refused by the SSRF guard, as evidence", async () => {
    const result = await runScan("metadata.test", options({ outbound: outboundPolicy("scan", "none") }), Date.now());
    const cert = finding(result.web, "tls:certificate");
    expect(cert?.result).toBe("cert-no-https");
    expect(cert?.detail).toContain("refused by the SSRF guard");
    expect(cert?.detail).toContain("metadata");
  });

  test("recheck re-runs one finding", async () => {
    const again = await recheck("good.test", "mail:dmarc", options(), Date.now());
    expect(again).toEqual({ ok: true, finding: finding((await scan("good.test")).dns, "mail:dmarc") });
    const web = await recheck("bad.test", "tls:hsts", options(), Date.now());
    expect(web.ok && web.finding.result).toBe("hsts-missing");
    expect(await recheck("good.test", "dns:no-such-check", options(), Date.now())).toEqual({ ok: false, reason: "unknown_finding" });
  });
});

describe("a server that speaks only TLS 1.0/1.1, end to end", () => {
  test("is reached, graded tls-obsolete, and its page is still judged", async () => {
    const result = await runScan("legacy.test", options({ httpsPort: web.legacyHttpsPort }), Date.now());
    const version = finding(result.web, "tls:version");
    expect([version?.status, version?.result]).toEqual(["fail", "tls-obsolete"]);
    expect(version?.evidence).toContain("negotiated: TLSv1.1");
    expect(version?.evidence).toContain("TLS 1.1 handshake: accepted");
    expect(finding(result.web, "tls:certificate")?.result).toBe("cert-valid");
    expect(finding(result.web, "headers:csp")?.result).toBe("csp-strict");
  });
});

describe("parseDomain", () => {
  test.each([
    ["Good.Test.", "good.test"],
    ["münchen.example", "xn--mnchen-3ya.example"],
  ])("accepts %s", (input, domain) => {
    expect(parseDomain(input)).toEqual({ ok: true, domain });
  });
  test.each(["localhost", "127.0.0.1", "a..b", "-x.test", "exa mple.test", ""])("refuses %s", (input) => {
    expect(parseDomain(input)).toEqual({ ok: false, reason: "invalid_domain" });
  });
});
