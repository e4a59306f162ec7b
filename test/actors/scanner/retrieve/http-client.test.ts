import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { defaultScanOptions, type ScanOptions } from "../../../../shared/platform/net/outbound/options.js";
import { createDnsClient } from "../../../../shared/platform/net/outbound/dns-client.js";
import {
  BODY_LIMIT,
  fetchOnce,
  followRedirects,
  type HttpContext,
  probeLegacyTls,
} from "../../../../shared/platform/net/outbound/http-client.js";
import { checkAddress, outboundPolicy, type OutboundPolicy } from "../../../../shared/platform/net/address-policy.js";
import { dnsHostResolver, type HostResolver } from "../../../../shared/platform/net/outbound/ssrf.js";
import { type FixtureDns, startDnsServer } from "../../../fixtures/scanner/dns-server.js";
import { type FixtureWeb, startWebServers } from "../../../fixtures/scanner/web-servers.js";

describe("http client against the fixture servers", () => {
  let dns: FixtureDns;
  let web: FixtureWeb;
  beforeAll(async () => {
    [dns, web] = await Promise.all([startDnsServer(), startWebServers()]);
  });
  afterAll(async () => {
    await Promise.all([dns?.stop(), web?.stop()]);
  });

  const options = (overrides: Partial<ScanOptions> = {}): ScanOptions =>
    defaultScanOptions({
      resolver: { host: dns.host, port: dns.port },
      outbound: outboundPolicy("scan", "all"),
      httpPort: web.httpPort,
      httpsPort: web.httpsPort,
      caPem: web.caPem,
      timeoutMs: 10_000,
      ...overrides,
    });
  const context = (overrides: Partial<ScanOptions> = {}, extra: Partial<HttpContext> = {}): HttpContext => {
    const o = options(overrides);
    return { options: o, resolveHost: dnsHostResolver(createDnsClient(o.resolver, o.timeoutMs)), ...extra };
  };

  test("records status, raw headers with repeated Set-Cookie, and validated TLS", async () => {
    const exchange = await fetchOnce(new URL("https://good.test/"), context());
    expect(exchange.status).toBe(200);
    expect(exchange.address).toBe("127.0.0.1");
    expect(exchange.headers.filter(([name]) => name === "set-cookie")).toHaveLength(2);
    expect(exchange.tls).toMatchObject({ authorized: true, authorizationError: null, protocol: "TLSv1.3" });
    expect(exchange.tls?.certificate?.subjectAltNames).toContain("DNS:good.test");
  });

  test("without the fixture CA the certificate is evidence, not an error", async () => {
    const exchange = await fetchOnce(new URL("https://good.test/"), context({ caPem: null }));
    expect(exchange.status).toBe(200);
    expect(exchange.tls?.authorized).toBe(false);
    expect(exchange.tls?.authorizationError).toMatch(/UNABLE_TO_(GET_ISSUER|VERIFY)/);
  });

  test("an expired certificate is reported with its dates", async () => {
    const exchange = await fetchOnce(new URL("https://expired.test/"), context());
    expect(exchange.tls?.authorizationError).toBe("CERT_HAS_EXPIRED");
    expect(exchange.tls?.certificate?.validToMs).toBeLessThan(Date.now());
  });

  test("bodies stop at 1 MiB", async () => {
    const exchange = await fetchOnce(new URL("https://large.test/"), context());
    expect(exchange.bodyTruncated).toBe(true);
    expect(exchange.body.length).toBe(BODY_LIMIT);
  });

  test("redirect loops are detected without refetching", async () => {
    const chain = await followRedirects(new URL("http://loop.test/"), context());
    expect(chain.outcome).toBe("loop");
    expect(chain.hops.map((h) => h.url)).toEqual(["http://loop.test/", "http://loop.test/a"]);
  });

  test("http redirects to https on the configured port", async () => {
    const chain = await followRedirects(new URL("http://good.test/"), context());
    expect(chain.outcome).toBe("complete");
    expect(chain.hops.map((h) => [h.url, h.status])).toEqual([
      ["http://good.test/", 301],
      ["https://good.test/", 200],
    ]);
  });

  test("a redirect to a port other than the web ports is not followed", async () => {
    const chain = await followRedirects(new URL("http://redirect-port.test/"), context());
    expect(chain.outcome).toBe("error");
    expect(chain.hops.map((h) => [h.url, h.status])).toEqual([
      ["http://redirect-port.test/", 302],
      ["http://good.test:6379/", null],
    ]);
    expect(chain.hops[1].error).toMatch(/port 6379/);
  });

  test("every redirect hop passes the SSRF guard", async () => {
    // Only loopback is allowed, so the fixture answers and the hop to private.test (10.0.0.1) is refused.
    const loopbackOnly = (ip: string, policy: OutboundPolicy) => (ip === "127.0.0.1" ? { ok: true as const } : checkAddress(ip, policy));
    const chain = await followRedirects(
      new URL("http://redirect-private.test/"),
      context({ outbound: outboundPolicy("scan", "none") }, { addressPolicy: loopbackOnly }),
    );
    expect(chain.outcome).toBe("error");
    expect(chain.hops[0].status).toBe(302);
    expect(chain.hops[1]).toMatchObject({ url: "http://private.test/", status: null, refused: "private", address: null });
  });

  test("the name is resolved once and the checked address is the one connected to (no rebinding)", async () => {
    const answers = [["127.0.0.1"], ["10.0.0.1"]];
    let calls = 0;
    const rebinding: HostResolver = async () => answers[Math.min(calls++, 1)];
    const loopbackOnly = (ip: string, policy: OutboundPolicy) => (ip === "127.0.0.1" ? { ok: true as const } : checkAddress(ip, policy));
    const exchange = await fetchOnce(new URL("http://bad.test/"), {
      options: options({ outbound: outboundPolicy("scan", "none") }),
      resolveHost: rebinding,
      addressPolicy: loopbackOnly,
    });
    expect(calls).toBe(1);
    expect(exchange).toMatchObject({ status: 200, address: "127.0.0.1" });
  });

  test("a refused name is never requested", async () => {
    const exchange = await fetchOnce(
      new URL("http://metadata.test/latest/meta-data/"),
      context({ outbound: outboundPolicy("scan", "none") }),
    );
    expect(exchange).toMatchObject({ status: null, refused: "metadata" });
  });

  test("the fixture servers refuse a TLS 1.1 handshake", async () => {
    expect(await probeLegacyTls(new URL("https://good.test/"), context())).toBe(false);
  });
});
