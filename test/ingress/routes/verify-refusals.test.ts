import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { REASONS } from "../../../shared/platform/reasons.js";
import { advance, clientSetup, makeKey, makeOrg, verify, type MadeKey } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("verifyrefusals");
});
afterAll(async () => {
  await gw?.stop();
});

interface Case {
  reason: keyof typeof REASONS;
  /** Makes the key and returns the parameters of the call that must be refused. */
  arrange: () => Promise<{ made: MadeKey; params: Record<string, unknown> }>;
}

const base = (made: MadeKey, extra: Record<string, unknown> = {}) => ({ made, params: { key: made.key, domain: "example.com", ...extra } });

/** One case per refusal reason of verify, each alone. The connecting address in tests is 127.0.0.1. */
const CASES: Case[] = [
  {
    reason: "key_suspended",
    arrange: async () => {
      const made = await clientSetup(gw);
      expect((await gw.admin("POST", `/keys/${made.id}/suspend`)).status).toBe(200);
      return base(made);
    },
  },
  {
    reason: "expired",
    arrange: async () => {
      const clock = (await gw.admin("GET", "/clock")).body.now as number;
      const made = await clientSetup(gw, { expires_at: new Date((clock + 3600) * 1000).toISOString() });
      await advance(gw, 3601);
      return base(made);
    },
  },
  { reason: "ip_blocked", arrange: async () => base(await clientSetup(gw, { ip_deny: ["127.0.0.0/8"] })) },
  { reason: "ip_not_allowed", arrange: async () => base(await clientSetup(gw, { ip_allow: ["10.0.0.0/8", "2001:db8::/32"] })) },
  {
    reason: "geo_blocked",
    arrange: async () => base(await clientSetup(gw, { kind: "server", countries_block: ["US"] }), { ip: "8.8.8.8" }),
  },
  {
    reason: "geo_not_allowed",
    arrange: async () => base(await clientSetup(gw, { kind: "server", countries_allow: ["DE", "FR"] }), { ip: "8.8.8.8" }),
  },
  { reason: "insufficient_scope", arrange: async () => base(await clientSetup(gw, { scopes: ["read"] }), { scope: "write" }) },
  { reason: "domain_mismatch", arrange: async () => base(await clientSetup(gw), { domain: "example.org" }) },
  {
    reason: "domain_not_verified",
    arrange: async () => {
      const made = await makeKey(gw, await makeOrg(gw), { domain: "unproven.com" });
      return { made, params: { key: made.key, domain: "unproven.com" } };
    },
  },
  {
    reason: "usage_limit_exceeded",
    arrange: async () => {
      const made = await clientSetup(gw, {}, { plan: "free" });
      // Spend the free allowance (1,000) through the counter the script reads.
      const snapshot = JSON.parse((await gw.ctx.redis.hget(gw.ctx.keys.orgSnapshot(made.orgId), "json")) ?? "{}");
      await gw.ctx.redis.set(gw.ctx.keys.cycleUsed(made.orgId, snapshot.cycle_anchor_ms), 1000);
      return base(made);
    },
  },
  {
    reason: "rate_limited",
    arrange: async () => {
      const made = await clientSetup(gw, { rate_per_minute: 1 });
      expect((await verify(gw, { key: made.key, domain: "example.com" })).status).toBe(200);
      return base(made);
    },
  },
  {
    reason: "installation_pending",
    arrange: async () => {
      const made = await clientSetup(gw);
      expect((await verify(gw, { key: made.key, domain: "example.com", install: "first" })).status).toBe(200);
      return base(made, { install: "second" });
    },
  },
  {
    reason: "installation_blocked",
    arrange: async () => {
      const made = await clientSetup(gw);
      expect((await verify(gw, { key: made.key, domain: "example.com", install: "first" })).status).toBe(200);
      expect((await gw.admin("POST", `/keys/${made.id}/installations/first/block`)).status).toBe(200);
      return base(made, { install: "first" });
    },
  },
];

describe("verify refusals", () => {
  it.each(CASES.map((c) => [c.reason, c] as const))("%s", async (reason, c) => {
    const { made, params } = await c.arrange();
    const answer = await verify(gw, params);
    expect(answer.status).toBe(REASONS[reason].status);
    expect(answer.body).toMatchObject({ authorized: false, reason, message: REASONS[reason].message });
    expect(answer.body.key).toMatchObject({ id: made.id, prefix: made.details.prefix });
    expect(answer.body).not.toHaveProperty("signature");
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("missing_key: 400, nothing else", async () => {
    for (const params of [{}, { key: "" }, { domain: "example.com" }]) {
      const answer = await verify(gw, params);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ authorized: false, reason: "missing_key", message: REASONS.missing_key.message });
    }
  });

  it("invalid_key: an unknown key yields only the reason", async () => {
    const answer = await verify(gw, { key: "ak_live_doesnotexist", domain: "example.com" });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ authorized: false, reason: "invalid_key", message: REASONS.invalid_key.message });
  });

  it("invalid_key: a revoked key, from the very next call on, and after rotation", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).status).toBe(200);
    const rotated = await gw.admin("POST", `/keys/${made.id}/rotate`);
    expect(rotated.status).toBe(201);
    const old = await verify(gw, { key: made.key, domain: "example.com" });
    expect(old.status).toBe(401);
    expect(old.body).not.toHaveProperty("key");
    expect((await verify(gw, { key: rotated.body.key, domain: "example.com" })).status).toBe(200);
    expect((await gw.admin("POST", `/keys/${rotated.body.details.id}/revoke`)).status).toBe(200);
    expect((await verify(gw, { key: rotated.body.key, domain: "example.com" })).body.reason).toBe("invalid_key");
  });

  it("domain_mismatch when a locked key omits the domain", async () => {
    const made = await clientSetup(gw);
    const answer = await verify(gw, { key: made.key });
    expect(answer.status).toBe(403);
    expect(answer.body.reason).toBe("domain_mismatch");
  });
});
