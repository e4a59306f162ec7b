import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../../shared/platform/crypto/hash.js";
import { findOrg, orgCycle } from "../../../shared/accounts/db/orgs.js";
import { digest } from "../../../shared/verify/snapshots/projector.js";
import { duplicateRedis } from "../../../shared/platform/redis/client.js";
import type { KeySnapshot, OrgSnapshot } from "../../../shared/verify/snapshots/types.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("projector");
});
afterAll(async () => {
  await gw?.stop();
});

async function keySnapshot(orgId: number, keyId: number): Promise<{ value: KeySnapshot; v: string } | null> {
  const [json, v] = await gw.ctx.redis.hmget(gw.ctx.keys.keySnapshot(orgId, keyId), "json", "v");
  return json && v ? { value: JSON.parse(json) as KeySnapshot, v } : null;
}

async function orgSnapshot(orgId: number): Promise<OrgSnapshot | null> {
  const json = await gw.ctx.redis.hget(gw.ctx.keys.orgSnapshot(orgId), "json");
  return json ? (JSON.parse(json) as OrgSnapshot) : null;
}

/** Every key of this gateway's prefix, deleted at once: what FLUSHALL does, for this prefix only. */
async function flushPrefix(): Promise<number> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await gw.ctx.redis.scan(cursor, "MATCH", `${gw.prefix}*`, "COUNT", 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== "0");
  // One DEL is atomic: the watcher never sees half a flush.
  return found.length ? gw.ctx.redis.del(...found) : 0;
}

describe("projector", () => {
  it("puts admin changes into the Redis snapshots within a second", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Projected", plan: "starter" })).body.org.id;
    const created = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "site", kind: "client", domain: "p.example.com" })).body;
    const keyId: number = created.details.id;

    const first = await waitFor(() => keySnapshot(org, keyId), 1000);
    expect(first.value).toMatchObject({
      id: keyId,
      org_id: org,
      kind: "client",
      name: "site",
      domain: "p.example.com",
      status: "active",
      rate_per_minute: 600,
    });
    expect(first.v).toBe(digest(JSON.stringify(first.value)));
    expect(await gw.ctx.redis.get(gw.ctx.keys.keyIndex(sha256Hex(created.key)))).toBe(`${org}:${keyId}`);

    await gw.admin("PATCH", `/keys/${keyId}`, { rate_per_minute: 5, countries_block: ["RU"] });
    const patched = await waitFor(async () => {
      const s = await keySnapshot(org, keyId);
      return s?.value.rate_per_minute === 5 ? s : null;
    }, 1000);
    expect(patched.value.countries_block).toEqual(["RU"]);
    expect(patched.v).not.toBe(first.v);

    await gw.admin("POST", `/keys/${keyId}/suspend`);
    await waitFor(async () => (await keySnapshot(org, keyId))?.value.status === "suspended", 1000);

    await gw.admin("PATCH", `/orgs/${org}`, { plan: "professional", subscription: "lapsed" });
    const orgSnap = await waitFor(async () => {
      const s = await orgSnapshot(org);
      return s?.plan === "professional" ? s : null;
    }, 1000);
    expect(orgSnap).toMatchObject({ id: org, allowance: 2_500_000, subscription: "lapsed" });
    expect(orgSnap.lapsed_at_ms).toEqual(expect.any(Number));

    await gw.admin("POST", `/orgs/${org}/domains`, { domain: "p.example.com", verified: true });
    await waitFor(async () => (await orgSnapshot(org))?.verified_domains.includes("p.example.com"), 1000);

    await gw.admin("POST", `/keys/${keyId}/revoke`);
    await waitFor(async () => (await keySnapshot(org, keyId)) === null, 1000);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.keyIndex(sha256Hex(created.key)))).toBe(0);
  });

  it("tells the ingress caches which snapshot changed", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Published", plan: "starter" })).body.org.id;
    const subscriber = duplicateRedis(gw.ctx.redis);
    const messages: string[] = [];
    try {
      await subscriber.subscribe(gw.ctx.keys.snapshotChannel());
      subscriber.on("message", (_channel: string, message: string) => messages.push(message));
      const keyId = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "k", kind: "server" })).body.details.id;
      await gw.admin("PATCH", `/orgs/${org}`, { name: "Renamed" });
      await waitFor(() => messages.length >= 2, 1000);
      expect(messages.map((m) => JSON.parse(m))).toEqual(
        expect.arrayContaining([
          { type: "key", id: keyId },
          { type: "org", id: org },
        ]),
      );
    } finally {
      subscriber.disconnect();
    }
  });

  it("rebuilds snapshots, sentinel, installations and the cycle counter after Redis lost everything, without a restart", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Survivor", plan: "starter" })).body.org.id;
    const created = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "site", kind: "client", domain: "s.example.com" })).body;
    const keyId: number = created.details.id;
    const revoked = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "gone", kind: "server" })).body;
    await gw.admin("POST", `/keys/${revoked.details.id}/revoke`);
    await gw.admin("POST", `/keys/${keyId}/installations/tablet/block`);
    await gw.admin("POST", `/orgs/${org}/domains`, { domain: "s.example.com", verified: true });
    const before = await keySnapshot(org, keyId);
    const orgBefore = await orgSnapshot(org);

    // PostgreSQL knows 42 calls were counted this cycle (the usage actor wrote them down).
    const row = await findOrg(gw.ctx.db, org);
    if (!row) throw new Error("org vanished");
    const { startMs } = orgCycle(row, gw.ctx.clock.now());
    await gw.ctx.db.query("INSERT INTO cycle_usage (org_id, cycle_start, used) VALUES ($1, to_timestamp($2 / 1000.0), 42)", [org, startMs]);

    expect(await flushPrefix()).toBeGreaterThan(0);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.snapshotSentinel())).toBe(0);

    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.snapshotSentinel())) === 1, 5000);
    expect(await keySnapshot(org, keyId)).toEqual(before);
    expect(await orgSnapshot(org)).toEqual(orgBefore);
    expect(await gw.ctx.redis.get(gw.ctx.keys.keyIndex(sha256Hex(created.key)))).toBe(`${org}:${keyId}`);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.keyIndex(sha256Hex(revoked.key)))).toBe(0);
    expect(await keySnapshot(org, revoked.details.id)).toBeNull();
    expect(await gw.ctx.redis.hget(gw.ctx.keys.installations(org, keyId), "tablet")).toBe("blocked");
    expect(await gw.ctx.redis.get(gw.ctx.keys.cycleUsed(org, startMs))).toBe("42");
    expect((await gw.admin("GET", `/orgs/${org}`)).body.org.used).toBe(42);
    expect((await gw.call("/healthz")).status).toBe(200);

    // The running ingress keeps projecting afterwards.
    await gw.admin("PATCH", `/keys/${keyId}`, { name: "after" });
    await waitFor(async () => (await keySnapshot(org, keyId))?.value.name === "after", 1000);
  });

  it("never lowers a live cycle counter that is ahead of PostgreSQL", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Ahead", plan: "starter" })).body.org.id;
    const row = await findOrg(gw.ctx.db, org);
    if (!row) throw new Error("org vanished");
    const { startMs } = orgCycle(row, gw.ctx.clock.now());
    await gw.ctx.redis.set(gw.ctx.keys.cycleUsed(org, startMs), "17");
    await gw.admin("PATCH", `/orgs/${org}`, { name: "Ahead still" });
    await gw.ingress.deps.projector.rebuildAll();
    expect(await gw.ctx.redis.get(gw.ctx.keys.cycleUsed(org, startMs))).toBe("17");
  });
});
