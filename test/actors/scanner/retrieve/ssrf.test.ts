import dgram from "node:dgram";
import http from "node:http";
import { Packet } from "dns2";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createDnsClient } from "../../../../shared/platform/net/outbound/dns-client.js";
import {
  checkAddress,
  literalRefusal,
  outboundPolicy,
  outboundPolicyOf,
  type OutboundPolicy,
} from "../../../../shared/platform/net/address-policy.js";
import { dnsHostResolver, guardedLookup, resolveGuarded } from "../../../../shared/platform/net/outbound/ssrf.js";
import { type FixtureDns, startDnsServer } from "../../../fixtures/scanner/dns-server.js";
import { type FixtureWeb, startWebServers } from "../../../fixtures/scanner/web-servers.js";

const NONE = outboundPolicy("scan", "none");
const ALL = outboundPolicy("probe", "all");
/** Every non-public block there is, listed: what is refused even so is refused whatever the policy. */
const EVERYTHING_LISTED = outboundPolicy("siem", ["0.0.0.0/0", "::/0"]);

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
    expect(checkAddress(ip, NONE)).toEqual({ ok: false, reason });
  });

  test.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("accepts public %s", (ip) => {
    for (const policy of [NONE, ALL]) expect(checkAddress(ip, policy)).toEqual({ ok: true });
  });

  test('reach "all" lets loopback and private through; never multicast, metadata or ::/96, whatever the policy', () => {
    for (const ip of ["127.0.0.1", "10.0.0.1", "169.254.1.1", "::1"]) expect(checkAddress(ip, ALL)).toEqual({ ok: true });
    for (const policy of [ALL, EVERYTHING_LISTED]) expect(checkAddress("224.0.0.1", policy).ok).toBe(false);
    for (const policy of [NONE, ALL, EVERYTHING_LISTED]) {
      for (const ip of [
        "169.254.169.254",
        "fd00:ec2::254",
        "168.63.129.16",
        "::ffff:a9fe:a9fe",
        "::ffff:168.63.129.16",
        // AWS ECS task credentials, EKS pod identity (v4 and v6), Alibaba Cloud, Oracle Cloud.
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::23",
        "100.100.100.200",
        "::ffff:100.100.100.200",
        "192.0.0.192",
      ]) {
        expect([ip, policy.reach, checkAddress(ip, policy)]).toEqual([ip, policy.reach, { ok: false, reason: "metadata" }]);
      }
      for (const ip of ["::a9fe:a9fe", "::1.2.3.4", "::808:808", "::2"]) {
        expect([ip, policy.reach, checkAddress(ip, policy)]).toEqual([ip, policy.reach, { ok: false, reason: "ipv4_compatible" }]);
      }
    }
  });

  test("a listed reach opens the listed blocks only, in every form of their addresses", () => {
    const listed = outboundPolicy("siem", ["127.0.0.0/8", "10.1.0.0/16", "192.168.7.9", "fd00:1::/64"]);
    for (const ip of ["127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1", "10.1.2.3", "192.168.7.9", "fd00:1::5", "2002:7f00:1::1", "8.8.8.8"]) {
      expect([ip, checkAddress(ip, listed)]).toEqual([ip, { ok: true }]);
    }
    for (const [ip, reason] of [
      ["10.2.0.1", "private"],
      ["192.168.7.10", "private"],
      ["::1", "loopback"],
      ["fd00:2::1", "unique_local"],
      ["169.254.1.1", "link_local"],
    ]) {
      expect([ip, checkAddress(ip, listed)]).toEqual([ip, { ok: false, reason }]);
    }
    // A block holding a metadata address opens the block, never the metadata address.
    const linkLocal = outboundPolicy("webhook", ["169.254.0.0/16", "168.63.129.0/24"]);
    expect(checkAddress("169.254.1.1", linkLocal)).toEqual({ ok: true });
    expect(checkAddress("169.254.169.254", linkLocal)).toEqual({ ok: false, reason: "metadata" });
    expect(checkAddress("168.63.129.16", linkLocal)).toEqual({ ok: false, reason: "metadata" });
    // An operator's mesh network in the carrier-grade NAT block does not open Alibaba's metadata service.
    const mesh = outboundPolicy("siem", ["100.64.0.0/10"]);
    expect(checkAddress("100.100.100.199", mesh)).toEqual({ ok: true });
    expect(checkAddress("100.100.100.200", mesh)).toEqual({ ok: false, reason: "metadata" });
  });

  test("each purpose's reach comes from its own setting", () => {
    const reach = (config: Parameters<typeof outboundPolicyOf>[1]) =>
      Object.fromEntries(
        (["scan", "probe", "siem", "webhook"] as const).map((purpose) => {
          const policy: OutboundPolicy = outboundPolicyOf(purpose, config);
          return [purpose, ["127.0.0.1", "10.0.0.1"].map((ip) => checkAddress(ip, policy).ok)];
        }),
      );
    const none = { scanAllowPrivate: false, probeAllowPrivate: false, outboundAllowCidrs: [] };
    expect(reach(none)).toEqual({ scan: [false, false], probe: [false, false], siem: [false, false], webhook: [false, false] });
    // The SIEM and webhook allowlist opens nothing to scans or probes.
    expect(reach({ ...none, outboundAllowCidrs: ["127.0.0.0/8"] })).toEqual({
      scan: [false, false],
      probe: [false, false],
      siem: [true, false],
      webhook: [true, false],
    });
    expect(reach({ ...none, probeAllowPrivate: true })).toEqual({
      scan: [false, false],
      probe: [true, true],
      siem: [false, false],
      webhook: [false, false],
    });
    // The scanner's test switch: scans and probes (operator-api.md), never SIEM collectors or webhooks.
    expect(reach({ ...none, scanAllowPrivate: true })).toEqual({
      scan: [true, true],
      probe: [true, true],
      siem: [false, false],
      webhook: [false, false],
    });
  });

  test("the admin API's creation check judges literal addresses and localhost names, not other names", () => {
    const siem = outboundPolicy("siem", ["127.0.0.0/8"]);
    expect(literalRefusal("127.0.0.1", siem)).toBeNull();
    expect(literalRefusal("localhost", siem)).toBeNull();
    expect(literalRefusal("collector.example.com", siem)).toBeNull();
    expect(literalRefusal("10.0.0.1", siem)).toBe(
      "the address is refused (private; OUTBOUND_ALLOW_CIDRS lists the private blocks it may reach)",
    );
    expect(literalRefusal("[::1]", siem)).toMatch(/^the address is refused \(loopback; /);
    expect(literalRefusal("169.254.169.254", outboundPolicy("webhook", ["169.254.0.0/16"]))).toBe("the address is refused (metadata)");
    expect(literalRefusal("app.localhost", outboundPolicy("webhook", "none"))).toMatch(/\(loopback; /);
    // The root label written out is the same name.
    for (const host of ["localhost.", "LOCALHOST.", "app.localhost.", "localhost.."]) {
      expect([host, literalRefusal(host, outboundPolicy("siem", "none"))]).toEqual([
        host,
        "the address is refused (loopback; OUTBOUND_ALLOW_CIDRS lists the private blocks it may reach)",
      ]);
    }
    expect(literalRefusal("localhost.example.com.", outboundPolicy("siem", "none"))).toBeNull();
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
    const verdict = await resolveGuarded(name, NONE, resolve());
    expect(verdict).toMatchObject({ ok: false, reason });
    // The refusal names the kind of address, never the address (it is the service's network).
    if (!verdict.ok) expect(verdict.detail).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
  });

  test("a policy with private reach accepts private ones and pins the checked address; metadata stays refused", async () => {
    for (const policy of [ALL, outboundPolicy("siem", ["10.0.0.0/8"])]) {
      expect(await resolveGuarded("private.test", policy, resolve())).toEqual({ ok: true, address: "10.0.0.1", family: 4 });
      expect(await resolveGuarded("metadata.test", policy, resolve())).toMatchObject({ ok: false, reason: "metadata" });
    }
    expect(await resolveGuarded("private.test", outboundPolicy("siem", ["127.0.0.0/8"]), resolve())).toMatchObject({
      ok: false,
      reason: "private",
    });
  });

  test("an unknown name is unresolvable, not an exception", async () => {
    expect(await resolveGuarded("nothing-here.test", NONE, resolve())).toMatchObject({ ok: false, reason: "unresolvable" });
  });

  test("scan evidence tells a name that does not resolve from one resolving inside, never naming the resolver", async () => {
    // The scanner's decision (docs/security.md, item 8): the customer's own names, and DNS evidence says as much already.
    expect(await resolveGuarded("nothing-here.test", NONE, resolve())).toMatchObject({
      detail: "cannot resolve nothing-here.test: nxdomain",
    });
    // A resolver that answers over UDP "truncated, ask over TCP" and refuses TCP: the socket
    // error names its address and port (connect ECONNREFUSED 127.0.0.1:<port>).
    const truncating = dgram.createSocket("udp4");
    truncating.on("message", (data, peer) => {
      const reply = Packet.createResponseFromRequest(Packet.parse(data));
      reply.header.tc = 1;
      truncating.send(reply.toBuffer(), peer.port, peer.address);
    });
    await new Promise<void>((done) => truncating.bind(0, "127.0.0.1", done));
    try {
      const port = truncating.address().port;
      const verdict = await resolveGuarded("good.test", NONE, dnsHostResolver(createDnsClient({ host: "127.0.0.1", port }, 2000)));
      expect(verdict).toMatchObject({ ok: false, reason: "unresolvable" });
      if (!verdict.ok) {
        expect(verdict.detail).toBe("cannot resolve good.test: the DNS server could not be asked (ECONNREFUSED)");
        expect(verdict.detail).not.toContain(String(port));
      }
    } finally {
      truncating.close();
    }
  });

  const get = (host: string, policy: OutboundPolicy) =>
    new Promise<{ status?: number; code?: string }>((done) => {
      const request = http.get(
        { host, port: web.httpPort, path: "/", lookup: guardedLookup(policy, resolver(), 2000), agent: false },
        (response) => {
          response.resume();
          done({ status: response.statusCode });
        },
      );
      request.on("error", (error: NodeJS.ErrnoException) => done({ code: error.code }));
    });

  test("guardedLookup refuses before connecting, and connects when allowed", async () => {
    expect(await get("private.test", NONE)).toEqual({ code: "EACCES" });
    expect(await get("bad.test", NONE)).toEqual({ code: "EACCES" });
    expect(await get("bad.test", ALL)).toEqual({ status: 200 });
  });
});
