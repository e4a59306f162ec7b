import http from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createDnsClient } from "../../../../actors/scanner/retrieve/dns-client.js";
import { checkAddress } from "../../../../shared/net/address-policy.js";
import { dnsHostResolver, guardedLookup, resolveGuarded } from "../../../../actors/scanner/retrieve/ssrf.js";
import { type FixtureDns, startDnsServer } from "../../../fixtures/scanner/dns-server.js";
import { type FixtureWeb, startWebServers } from "../../../fixtures/scanner/web-servers.js";

describe("checkAddress", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "metadata"],
    ["169.254.10.10", "link_local"],
    ["100.64.0.1", "carrier_grade_nat"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd00:ec2::254", "metadata"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["64:ff9b::a00:1", "private"],
    ["2002:7f00:1::1", "loopback"],
    ["127.1", "invalid_address"],
    ["not-an-ip", "invalid_address"],
  ])("refuses %s (%s)", (ip, reason) => {
    expect(checkAddress(ip, false)).toEqual({ ok: false, reason });
  });

  test.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("accepts public %s", (ip) => {
    expect(checkAddress(ip, false)).toEqual({ ok: true });
  });

  test("allowPrivate lets loopback and private through, never multicast, metadata or ::/96", () => {
    for (const ip of ["127.0.0.1", "10.0.0.1", "169.254.1.1", "::1"]) expect(checkAddress(ip, true)).toEqual({ ok: true });
    expect(checkAddress("224.0.0.1", true).ok).toBe(false);
    for (const allowPrivate of [false, true]) {
      for (const ip of ["169.254.169.254", "fd00:ec2::254", "168.63.129.16", "::ffff:a9fe:a9fe", "::ffff:168.63.129.16"]) {
        expect([ip, allowPrivate, checkAddress(ip, allowPrivate)]).toEqual([ip, allowPrivate, { ok: false, reason: "metadata" }]);
      }
      for (const ip of ["::a9fe:a9fe", "::1.2.3.4", "::808:808", "::2"]) {
        expect([ip, allowPrivate, checkAddress(ip, allowPrivate)]).toEqual([ip, allowPrivate, { ok: false, reason: "ipv4_compatible" }]);
      }
    }
  });
});

describe("resolution through the guard", () => {
  let dns: FixtureDns;
  let web: FixtureWeb;
  beforeAll(async () => {
    [dns, web] = await Promise.all([startDnsServer(), startWebServers()]);
  });
  afterAll(async () => {
    await Promise.all([dns?.stop(), web?.stop()]);
  });
  const resolver = () => ({ host: dns.host, port: dns.port });
  const resolve = () => dnsHostResolver(createDnsClient(resolver(), 2000));

  test.each([
    ["private.test", "private"],
    ["metadata.test", "metadata"],
    ["mapped.test", "loopback"],
    ["bad.test", "loopback"],
  ])("a name resolving to a refused address is refused: %s", async (name, reason) => {
    const verdict = await resolveGuarded(name, false, resolve());
    expect(verdict).toMatchObject({ ok: false, reason });
    // The refusal names the kind of address, never the address (it is the service's network).
    if (!verdict.ok) expect(verdict.detail).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
  });

  test("allowPrivate accepts private ones and pins the checked address; metadata stays refused", async () => {
    expect(await resolveGuarded("private.test", true, resolve())).toEqual({ ok: true, address: "10.0.0.1", family: 4 });
    expect(await resolveGuarded("metadata.test", true, resolve())).toMatchObject({ ok: false, reason: "metadata" });
  });

  test("an unknown name is unresolvable, not an exception", async () => {
    expect(await resolveGuarded("nothing-here.test", false, resolve())).toMatchObject({ ok: false, reason: "unresolvable" });
  });

  const get = (host: string, allowPrivate: boolean) =>
    new Promise<{ status?: number; code?: string }>((done) => {
      const request = http.get({ host, port: web.httpPort, path: "/", lookup: guardedLookup(allowPrivate, resolver(), 2000), agent: false }, (response) => {
        response.resume();
        done({ status: response.statusCode });
      });
      request.on("error", (error: NodeJS.ErrnoException) => done({ code: error.code }));
    });

  test("guardedLookup refuses before connecting, and connects when allowed", async () => {
    expect(await get("private.test", false)).toEqual({ code: "EACCES" });
    expect(await get("bad.test", false)).toEqual({ code: "EACCES" });
    expect(await get("bad.test", true)).toEqual({ status: 200 });
  });
});
