import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { usageTally } from "./content-fixtures.js";
import { clientSetup, usedOf, verify } from "./verify-fixtures.js";

/**
 * The `ip` parameter (docs/security.md, item 2): interface.md offers it on verify.php only,
 * "a server asks on a visitor's behalf". Elsewhere, and for client keys, the connecting
 * address (127.0.0.1 in tests) is judged whatever was sent; an `ip` that is no address is 400.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("ipparam");
});
afterAll(async () => {
  await gw?.stop();
});

const get = (path: string, query: Record<string, string>) => gw.call(`/api/v1/${path}`, { query });

describe("ip is honoured on verify.php only, for server keys only", () => {
  it("a server key allowlisted to an address is not passed by claiming it on scan, content or botcheck", async () => {
    const made = await clientSetup(gw, { kind: "server", ip_allow: ["203.0.113.7"] });
    const claim = { key: made.key, domain: "example.com", ip: "203.0.113.7" };
    for (const path of ["scan.php", "content.php", "botcheck.php"]) {
      const answer = await get(path, claim);
      expect([path, answer.status, answer.body.reason]).toEqual([path, 403, "ip_not_allowed"]);
    }
    // verify.php offers it to server keys.
    expect((await verify(gw, claim)).body.reason).toBe("ok");
  });

  it("a client key's claimed ip proves nothing, on verify too", async () => {
    const made = await clientSetup(gw, { ip_allow: ["203.0.113.7"] });
    const answer = await verify(gw, { key: made.key, domain: "example.com", ip: "203.0.113.7" });
    expect([answer.status, answer.body.reason]).toEqual([403, "ip_not_allowed"]);
    const denied = await clientSetup(gw, { ip_deny: ["127.0.0.0/8"] });
    expect((await verify(gw, { key: denied.key, domain: "example.com", ip: "8.8.8.8" })).body.reason).toBe("ip_blocked");
  });

  it("an ip that is no address never passes a deny list or a country rule: 400 bad_ip on verify, ignored elsewhere", async () => {
    const denied = await clientSetup(gw, { kind: "server", ip_deny: ["127.0.0.0/8"] });
    for (const ip of ["x", "999.1.1.1", "1.2.3.4/8", "::g", "a".repeat(64)]) {
      const answer = await verify(gw, { key: denied.key, domain: "example.com", ip });
      expect([ip, answer.status, answer.body.reason, answer.body.authorized]).toEqual([ip, 400, "bad_ip", false]);
    }
    const content = await get("content.php", { key: denied.key, domain: "example.com", ip: "x" });
    expect([content.status, content.body.reason]).toEqual([403, "ip_blocked"]);
    const client = await clientSetup(gw);
    expect((await verify(gw, { key: client.key, domain: "example.com", ip: "not-an-ip" })).status).toBe(400);
    // Addresses in every written form are accepted.
    for (const ip of ["8.8.8.8", "2001:db8::1", "::ffff:8.8.8.8", "[2001:db8::1]"]) {
      expect((await verify(gw, { key: client.key, domain: "example.com", ip })).body.reason).toBe("ok");
    }
  });

  it("a malformed ip with a known key counts against the allowance (interface.md section 8 does not exempt bad_ip)", async () => {
    const made = await clientSetup(gw);
    const before = await usedOf(gw, made.orgId);
    const answer = await verify(gw, { key: made.key, domain: "example.com", ip: "not-an-ip" });
    expect([answer.status, answer.body.reason, answer.body.authorized, answer.body.key?.id]).toEqual([400, "bad_ip", false, made.id]);
    expect(await usedOf(gw, made.orgId)).toBe(before + 1);
    expect(await usageTally(gw, made.orgId, made.id)).toEqual({ "verify/bad_ip/1": 1 });
    // A suspended key's calls count for nothing, this one included; an unknown key counts against nobody.
    await gw.admin("POST", `/keys/${made.id}/suspend`);
    expect((await verify(gw, { key: made.key, domain: "example.com", ip: "x" })).body.reason).toBe("key_suspended");
    expect(await usedOf(gw, made.orgId)).toBe(before + 1);
    const unknown = await verify(gw, { key: `${made.key.slice(0, -4)}zzzz`, domain: "example.com", ip: "x" });
    expect([unknown.status, unknown.body.reason]).toEqual([401, "invalid_key"]);
  });
});

describe("an ip in a form other than the standard one is refused (docs/security.md, Input handling)", () => {
  // Each of these is 10.1.2.3 (or another address) to inet_aton or ipaddr.js.
  const NON_CANONICAL = [
    "167838211",
    "0xa010203",
    "0x0A010203",
    "012.1.2.3",
    "10.01.2.3",
    "10.1.2.03",
    "010.001.002.003",
    "0xa.1.2.3",
    "0xA.0x1.0x2.0x3",
    "10.0x1.2.3",
    "10.1.3",
    "10.1.515",
    "10.66051",
    "10.1.2.3.",
    ".10.1.2.3",
    "0",
    "4294967295",
    "0x7f000001",
    "017700000001",
    "127.1",
    "0177.0.0.1",
    "00000000010.1.2.3",
    "::10.1.2.3",
    "::ffff:010.1.2.3",
    "::ffff:0xa.1.2.3",
    "::ffff:10.1.3",
    "fe80::1%eth0",
    "[fe80::1%25eth0]",
    "10.1.2.3/32",
    "1e1.1.2.3",
    "+10.1.2.3",
  ];

  it("on verify.php: 400 bad_ip, never judged as the address it could be read as", async () => {
    const allowed = await clientSetup(gw, { kind: "server", ip_allow: ["10.1.2.3"] });
    expect((await verify(gw, { key: allowed.key, domain: "example.com", ip: "10.1.2.3" })).body.reason).toBe("ok");
    for (const ip of NON_CANONICAL) {
      const answer = await verify(gw, { key: allowed.key, domain: "example.com", ip });
      expect([ip, answer.status, answer.body.reason]).toEqual([ip, 400, "bad_ip"]);
    }
    for (const ip of ["10.1.2.3", "[10.1.2.3]", "::ffff:10.1.2.3", "0.0.0.0", "255.255.255.255", "2001:DB8:0:0:0:0:0:1", "::1", "::"]) {
      const answer = await verify(gw, { key: allowed.key, domain: "example.com", ip });
      expect([ip, answer.status]).toEqual([ip, ip.includes("10.1.2.3") ? 200 : 403]);
    }
  });

  it("in a key's IP lists: 400 bad_cidr", async () => {
    const orgId = (await clientSetup(gw)).orgId;
    for (const entry of [...NON_CANONICAL.filter((e) => e !== "10.1.2.3/32"), "10.1.2.3/08", "10.1.2.0/24/1", "10.0.0.0/33", "::/129"]) {
      const made = await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "k", kind: "server", ip_deny: [entry] });
      expect([entry, made.status, made.body.reason]).toEqual([entry, 400, "bad_cidr"]);
    }
    const made = await gw.admin("POST", `/orgs/${orgId}/keys`, {
      name: "k",
      kind: "server",
      ip_allow: ["10.1.2.3", "10.0.0.0/8", "2001:db8::/32", "::ffff:10.0.0.0/104"],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  });
});
