import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { startDnsServer, type TestDnsServer } from "./dns-server.js";

let gw: TestGateway;
let dns: TestDnsServer;
let orgId: number;

beforeAll(async () => {
  dns = await startDnsServer();
  gw = await startTestGateway("domains", { DNS_RESOLVER: dns.resolver });
  orgId = (await gw.admin("POST", "/orgs", { name: "Domains Inc" })).body.org.id;
});
afterAll(async () => {
  await gw?.stop();
  await dns?.close();
});

async function verifiedDomainsInSnapshot(id: number): Promise<string[]> {
  const json = await gw.ctx.redis.hget(gw.ctx.keys.orgSnapshot(id), "json");
  return json ? (JSON.parse(json) as { verified_domains: string[] }).verified_domains : [];
}

async function activity(id: number, domain: string) {
  const { rows } = await gw.ctx.db.query<{ grp: string; action_code: string; via: string; who: string }>(
    "SELECT grp, action_code, via, who FROM activity WHERE org_id = $1 AND domain = $2 ORDER BY id",
    [id, domain],
  );
  return rows;
}

describe("POST /orgs/:org/domains", () => {
  it("adds an unverified domain with its verification token and TXT record", async () => {
    const { status, body } = await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "Shop.Example.COM." });
    expect(status).toBe(201);
    expect(body.ok).toBe(true);
    expect(body.domain).toMatchObject({ name: "shop.example.com", verified: false });
    expect(body.domain.verification_token).toMatch(/^[0-9a-f]{32}$/);
    expect(body.domain.txt_record).toEqual({
      name: "_gateway-verification.shop.example.com",
      value: `gateway-verification=${body.domain.verification_token}`,
    });
    expect(await activity(orgId, "shop.example.com")).toEqual([
      { grp: "trust", action_code: "domain.added", via: "admin", who: "operator" },
    ]);
    expect(await verifiedDomainsInSnapshot(orgId)).not.toContain("shop.example.com");
  });

  it("refuses a duplicate with 409 conflict, whatever its spelling", async () => {
    await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "dup.example.com" });
    const again = await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "DUP.example.com." });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ ok: false, reason: "conflict" });
    expect(await activity(orgId, "dup.example.com")).toHaveLength(1);
  });

  it("lets an operator verify by hand, which reaches the org snapshot", async () => {
    const { status, body } = await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "manual.example.com", verified: true });
    expect(status).toBe(201);
    expect(body.domain).toMatchObject({ name: "manual.example.com", verified: true });
    expect(body.domain.verified_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(await activity(orgId, "manual.example.com")).toEqual([
      { grp: "trust", action_code: "domain.verified", via: "admin", who: "operator" },
    ]);
    expect(await verifiedDomainsInSnapshot(orgId)).toContain("manual.example.com");
  });

  it("leaves a manual verification to the operator: a write token refused forbidden, and nothing added", async () => {
    const token = await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: "domains-write", scopes: ["read", "write"] });
    expect(token.status).toBe(201);
    const asToken = (body: unknown) =>
      gw.call(`/admin/v1/orgs/${orgId}/domains`, { method: "POST", headers: { authorization: `Bearer ${token.body.token}` }, body });
    const claimed = await asToken({ domain: "bank.example.com", verified: true });
    expect(claimed.status).toBe(403);
    expect(claimed.body).toEqual({ ok: false, reason: "forbidden", message: expect.any(String) });
    expect(await activity(orgId, "bank.example.com")).toEqual([]);
    expect(await verifiedDomainsInSnapshot(orgId)).not.toContain("bank.example.com");
    // Without the claim the token adds it, unverified: the TXT record proves it.
    const added = await asToken({ domain: "bank.example.com", verified: false });
    expect(added.status).toBe(201);
    expect(added.body.domain).toMatchObject({ name: "bank.example.com", verified: false });
  });

  it.each([
    [{ domain: "not a domain" }, "bad_domain"],
    [{ domain: "https://example.com/" }, "bad_domain"],
    [{ domain: "example.com:443" }, "bad_domain"],
    [{ domain: "192.0.2.1" }, "bad_domain"],
    [{ domain: "" }, "bad_domain"],
    [{ domain: "-bad.example.com" }, "bad_domain"],
    [{ domain: `${"a".repeat(64)}.example.com` }, "bad_domain"],
    [{ domain: 42 }, "bad_domain"],
    [{ domain: ["example.com"] }, "bad_domain"],
    [{}, "missing_domain"],
    [{ domain: "ok.example.com", verified: "yes" }, "bad_verified"],
    [{ domain: "ok.example.com", owner: "me" }, "bad_owner"],
  ])("refuses %j with 400 %s", async (input, reason) => {
    const { status, body } = await gw.admin("POST", `/orgs/${orgId}/domains`, input);
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, reason });
  });

  it("answers 404 for an unknown organization", async () => {
    expect((await gw.admin("POST", "/orgs/999999/domains", { domain: "x.example.com" })).body.reason).toBe("not_found");
    expect((await gw.admin("POST", "/orgs/zero/domains", { domain: "x.example.com" })).status).toBe(404);
  });
});

describe("POST /orgs/:org/domains/:domain/verify", () => {
  it("verifies through the DNS TXT record served by DNS_RESOLVER", async () => {
    const added = (await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "dns.example.com" })).body.domain;
    dns.txt.set(added.txt_record.name, ["v=spf1 -all", added.txt_record.value]);
    const { status, body } = await gw.admin("POST", `/orgs/${orgId}/domains/dns.example.com/verify`);
    expect(status).toBe(200);
    expect(body.domain).toMatchObject({ name: "dns.example.com", verified: true });
    expect(dns.queries).toContain("_gateway-verification.dns.example.com");
    const rows = await activity(orgId, "dns.example.com");
    expect(rows.map((r) => r.action_code)).toEqual(["domain.added", "domain.verified"]);
    expect(rows[1].grp).toBe("trust");
    await waitFor(async () => (await verifiedDomainsInSnapshot(orgId)).includes("dns.example.com"), 1000);

    // Verifying again changes nothing and asks DNS nothing.
    const asked = dns.queries.length;
    const again = await gw.admin("POST", `/orgs/${orgId}/domains/DNS.example.com./verify`);
    expect(again.body.domain.verified).toBe(true);
    expect(dns.queries.length).toBe(asked);
    expect(await activity(orgId, "dns.example.com")).toHaveLength(2);
  });

  it("joins a record split into several character-strings", async () => {
    const added = (await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "split.example.com" })).body.domain;
    const value: string = added.txt_record.value;
    dns.txt.set(added.txt_record.name, [[value.slice(0, 10), value.slice(10)]]);
    const { body } = await gw.admin("POST", `/orgs/${orgId}/domains/split.example.com/verify`);
    expect(body.domain.verified).toBe(true);
  });

  it("leaves the domain unverified when the TXT record is wrong or missing", async () => {
    const added = (await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "wrong.example.com" })).body.domain;
    const missing = await gw.admin("POST", `/orgs/${orgId}/domains/wrong.example.com/verify`);
    expect(missing.status).toBe(200);
    expect(missing.body.domain.verified).toBe(false);

    dns.txt.set(added.txt_record.name, ["gateway-verification=0123456789abcdef0123456789abcdef"]);
    const wrong = await gw.admin("POST", `/orgs/${orgId}/domains/wrong.example.com/verify`);
    expect(wrong.status).toBe(200);
    expect(wrong.body.domain.verified).toBe(false);
    expect(wrong.body.checked.found).toEqual(["gateway-verification=0123456789abcdef0123456789abcdef"]);

    // Another organization's token for the same name does not prove this one.
    const other = (await gw.admin("POST", "/orgs", { name: "Other" })).body.org.id;
    const theirs = (await gw.admin("POST", `/orgs/${other}/domains`, { domain: "wrong.example.com" })).body.domain;
    dns.txt.set(theirs.txt_record.name, [theirs.txt_record.value]);
    expect((await gw.admin("POST", `/orgs/${orgId}/domains/wrong.example.com/verify`)).body.domain.verified).toBe(false);
    expect((await gw.admin("POST", `/orgs/${other}/domains/wrong.example.com/verify`)).body.domain.verified).toBe(true);

    expect(await verifiedDomainsInSnapshot(orgId)).not.toContain("wrong.example.com");
    expect((await activity(orgId, "wrong.example.com")).map((r) => r.action_code)).toEqual(["domain.added"]);
  });

  it("answers 404 for a domain the organization never added, or a malformed one", async () => {
    expect((await gw.admin("POST", `/orgs/${orgId}/domains/never.example.com/verify`)).status).toBe(404);
    expect((await gw.admin("POST", `/orgs/${orgId}/domains/not%20a%20domain/verify`)).status).toBe(404);
    expect((await gw.admin("POST", "/orgs/999999/domains/dns.example.com/verify")).status).toBe(404);
    expect((await gw.admin("POST", `/orgs/${orgId}/domains/%E0%A4%A/verify`)).status).toBe(404);
  });
});
