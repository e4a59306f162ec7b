import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanRedis, startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, makeKey, makeOrg, patchKey, usedOf, verify } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("verifystate");
});
afterAll(async () => {
  await gw?.stop();
});

const call = (key: string, extra: Record<string, unknown> = {}) => verify(gw, { key, domain: "example.com", ...extra });
const reasonOf = async (key: string, extra: Record<string, unknown> = {}) => (await call(key, extra)).body.reason as string;

describe("installations (interface.md 3.3)", () => {
  it("keeps the first, holds a second pending until approved, refuses a blocked one", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "shop-a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "shop-a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "shop-b" })).toBe("installation_pending");
    expect(await reasonOf(made.key, { install: "shop-b" })).toBe("installation_pending");
    // Once the key has installations, a call naming none is the "(unnamed)" installation,
    // pending like any new one (docs/security.md, item 4).
    expect(await reasonOf(made.key)).toBe("installation_pending");
    const listed = await waitFor(async () => {
      const answer = await gw.admin("GET", `/keys/${made.id}/installations`);
      return answer.body.installations.length === 3 ? answer : null;
    });
    const statuses = Object.fromEntries(listed.body.installations.map((i: { install: string; status: string }) => [i.install, i.status]));
    expect(statuses).toEqual({ "shop-a": "approved", "shop-b": "pending", "(unnamed)": "pending" });

    expect((await gw.admin("POST", `/keys/${made.id}/installations/shop-b/approve`)).status).toBe(200);
    expect(await reasonOf(made.key, { install: "shop-b" })).toBe("ok");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/shop-a/block`)).status).toBe(200);
    expect(await reasonOf(made.key, { install: "shop-a" })).toBe("installation_blocked");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/shop-a/approve`)).status).toBe(200);
    expect(await reasonOf(made.key, { install: "shop-a" })).toBe("ok");
  });

  it("records no installation for a call refused before it", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "intruder", domain: "evil.org" })).toBe("domain_mismatch");
    expect(await reasonOf(made.key, { install: "real" })).toBe("ok");
  });
});

describe("changes take effect on the very next verify", () => {
  it("PATCH, suspend and resume", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { scope: "write" })).toBe("ok");
    await patchKey(gw, made.id, { scopes: ["read"] });
    expect(await reasonOf(made.key, { scope: "write" })).toBe("insufficient_scope");
    await patchKey(gw, made.id, { ip_deny: ["127.0.0.1"] });
    expect(await reasonOf(made.key)).toBe("ip_blocked");
    await patchKey(gw, made.id, { ip_deny: [] });
    expect(await reasonOf(made.key)).toBe("ok");
    await gw.admin("POST", `/keys/${made.id}/suspend`);
    expect(await reasonOf(made.key)).toBe("key_suspended");
    await gw.admin("POST", `/keys/${made.id}/resume`);
    expect(await reasonOf(made.key)).toBe("ok");
  });

  it("a change the ingress was never told about is still seen (version check in the script)", async () => {
    const made = await clientSetup(gw, { scopes: ["read"] });
    expect(await reasonOf(made.key, { scope: "read" })).toBe("ok");
    // Write the new snapshot behind the cache's back: no pub/sub message reaches it.
    const redis = gw.ctx.redis;
    const snapKey = gw.ctx.keys.keySnapshot(made.orgId, made.id);
    const json = JSON.parse((await redis.hget(snapKey, "json")) ?? "{}");
    json.scopes = ["write"];
    await redis.hset(snapKey, "json", JSON.stringify(json), "v", "manual-version");
    expect(await reasonOf(made.key, { scope: "read" })).toBe("insufficient_scope");
  });
});

describe("IP binding", () => {
  it("judges the visitor address of a server key, or the connecting one when binding is on", async () => {
    const made = await clientSetup(gw, { kind: "server", ip_allow: ["198.51.100.7"] });
    expect(await reasonOf(made.key)).toBe("ip_not_allowed");
    expect(await reasonOf(made.key, { ip: "198.51.100.7" })).toBe("ok");
    await patchKey(gw, made.id, { ip_binding: true });
    expect(await reasonOf(made.key, { ip: "198.51.100.7" })).toBe("ip_not_allowed");
    await patchKey(gw, made.id, { ip_allow: ["127.0.0.1"] });
    expect(await reasonOf(made.key, { ip: "198.51.100.7" })).toBe("ok");
  });
  it("applies the deny list and country rules to the visitor address", async () => {
    const made = await clientSetup(gw, { kind: "server", ip_deny: ["203.0.113.0/24"], countries_block: ["GB"] });
    expect(await reasonOf(made.key, { ip: "203.0.113.5" })).toBe("ip_blocked");
    expect(await reasonOf(made.key, { ip: "81.2.69.160" })).toBe("geo_blocked");
    expect(await reasonOf(made.key, { ip: "8.8.8.8" })).toBe("ok");
    expect(await reasonOf(made.key, { ip: "10.1.1.1" })).toBe("ok");
  });
});

describe("the subscription window", () => {
  it("rolls on while the subscription is active and expires once it lapsed past the window end", async () => {
    const orgId = await makeOrg(gw);
    await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "example.com", verified: true });
    const made = await makeKey(gw, orgId);
    const first = await call(made.key);
    expect(first.body.reason).toBe("ok");
    await advance(gw, 31 * 86400);
    const rolled = await call(made.key);
    expect(rolled.body.reason).toBe("ok");
    expect(rolled.body.key.expires_at > first.body.key.expires_at).toBe(true);
    expect((await gw.admin("PATCH", `/orgs/${orgId}`, { subscription: "lapsed" })).status).toBe(200);
    expect(await reasonOf(made.key)).toBe("ok");
    const end = Date.parse(`${rolled.body.key.expires_at.replace(" ", "T")}Z`) / 1000;
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    await advance(gw, end - now + 1);
    const before = await usedOf(gw, orgId);
    const expired = await call(made.key);
    expect(expired.status).toBe(403);
    expect(expired.body.reason).toBe("expired");
    expect(await usedOf(gw, orgId)).toBe(before + 1);
    expect((await gw.admin("PATCH", `/orgs/${orgId}`, { subscription: "active" })).status).toBe(200);
    expect(await reasonOf(made.key)).toBe("ok");
  });
});

describe("Redis loss", () => {
  it("answers 503 (a fault, not a refusal) while snapshots are gone, and correctly again once rebuilt", async () => {
    const made = await clientSetup(gw, { scopes: ["read"] });
    expect(await reasonOf(made.key, { scope: "read" })).toBe("ok");
    await cleanRedis(gw.prefix);
    const during = await call(made.key, { scope: "read" });
    if (during.status !== 200) {
      expect(during.status).toBe(503);
      expect(during.body).not.toHaveProperty("authorized");
      expect(during.body.reason).toBe("unavailable");
    }
    // The watcher in the ingress sees the sentinel gone and rebuilds from PostgreSQL.
    await waitFor(async () => (await call(made.key, { scope: "read" })).status === 200, 10_000);
    expect(await reasonOf(made.key, { scope: "write" })).toBe("insufficient_scope");
    expect((await verify(gw, { key: "ak_live_unknown", domain: "example.com" })).body.reason).toBe("invalid_key");
  });
});
