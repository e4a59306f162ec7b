import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../../../shared/platform/reasons.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { putContent, usageTally } from "./content-fixtures.js";
import { advance, clientSetup, makeKey, makeOrg, usedOf, type MadeKey } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("contentrefusals");
});
afterAll(async () => {
  await gw?.stop();
});

const call = (params: Record<string, unknown>, headers?: Record<string, string>) =>
  gw.call("/api/v1/content.php", { method: "POST", body: params, headers });

const PAGE = "https://example.com/pricing";

describe("origin_mismatch: content only for the page it is published on", () => {
  let made: MadeKey;
  beforeAll(async () => {
    made = await clientSetup(gw, { content_origin: `${PAGE}?utm=1#top` });
    await putContent(gw, made.orgId, "price", "number", 10);
  });

  const cases: [string, Record<string, string>, "ok" | "origin_mismatch"][] = [
    ["Origin of the page", { origin: "https://example.com" }, "ok"],
    ["Origin with the default port spelled out", { origin: "https://EXAMPLE.com:443" }, "ok"],
    ["Origin wins over a wrong Referer", { origin: "https://example.com", referer: "https://elsewhere.net/" }, "ok"],
    ["another site", { origin: "https://evil.example.net" }, "origin_mismatch"],
    ["another scheme", { origin: "http://example.com" }, "origin_mismatch"],
    ["another port", { origin: "https://example.com:8443" }, "origin_mismatch"],
    ["a subdomain", { origin: "https://shop.example.com" }, "origin_mismatch"],
    ["the opaque origin", { origin: "null" }, "origin_mismatch"],
    ["Origin not a URL", { origin: "example.com" }, "origin_mismatch"],
    ["a wrong Origin with the right Referer", { origin: "https://evil.example.net", referer: PAGE }, "origin_mismatch"],
    ["Referer of the page, query and fragment ignored", { referer: `${PAGE}?a=1#b` }, "ok"],
    ["Referer of the page", { referer: PAGE }, "ok"],
    ["Referer of another page of the site", { referer: "https://example.com/other" }, "origin_mismatch"],
    ["Referer trimmed to the origin", { referer: "https://example.com/" }, "origin_mismatch"],
    ["Referer with a trailing slash", { referer: `${PAGE}/` }, "origin_mismatch"],
    ["Referer of another site", { referer: "https://evil.example.net/pricing" }, "origin_mismatch"],
    ["neither header: a server call", {}, "ok"],
  ];
  for (const [label, headers, expected] of cases) {
    it(`${label} → ${expected}`, async () => {
      const answer = await call({ key: made.key, domain: "example.com" }, headers);
      if (expected === "ok") {
        expect(answer.status).toBe(200);
        expect(answer.body.content.price.value).toBe(10);
      } else {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual({ ok: false, reason: "origin_mismatch", message: expect.any(String) });
        expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      }
    });
  }

  it("is not counted, and comes after the chain (a wrong domain is domain_mismatch first)", async () => {
    const before = await usedOf(gw, made.orgId);
    expect((await call({ key: made.key, domain: "example.com" }, { origin: "https://evil.example.net" })).body.reason).toBe(
      "origin_mismatch",
    );
    expect(
      (await call({ key: made.key, domain: "example.com", content_key: "nope" }, { origin: "https://evil.example.net" })).body.reason,
    ).toBe("origin_mismatch");
    expect(await usedOf(gw, made.orgId)).toBe(before);
    expect((await call({ key: made.key, domain: "evil.example.net" }, { origin: "https://evil.example.net" })).body.reason).toBe(
      "domain_mismatch",
    );
    expect(await usedOf(gw, made.orgId)).toBe(before + 1);
    const tally = await usageTally(gw, made.orgId, made.id);
    expect(tally["content/origin_mismatch/0"]).toBeGreaterThanOrEqual(2);
  });

  it("a key without content_origin serves any page", async () => {
    const open = await makeKey(gw, made.orgId, { name: "Open" });
    expect((await call({ key: open.key, domain: "example.com" }, { origin: "https://anywhere.example.net" })).status).toBe(200);
  });
});

interface Case {
  reason: keyof typeof REASONS;
  counts: boolean;
  arrange: () => Promise<{ made: MadeKey | null; params: Record<string, unknown> }>;
}

const base = (made: MadeKey, extra: Record<string, unknown> = {}) => ({ made, params: { key: made.key, domain: "example.com", ...extra } });

/** The verify reasons, each alone, with ok:false and the table's status; counted by the same rules. */
const CASES: Case[] = [
  { reason: "missing_key", counts: false, arrange: async () => ({ made: null, params: { domain: "example.com" } }) },
  {
    reason: "invalid_key",
    counts: false,
    arrange: async () => ({ made: null, params: { key: "ak_live_neverissued00000000000000", domain: "example.com" } }),
  },
  {
    reason: "key_suspended",
    counts: false,
    arrange: async () => {
      const made = await clientSetup(gw);
      await gw.admin("POST", `/keys/${made.id}/suspend`);
      return base(made);
    },
  },
  {
    reason: "expired",
    counts: true,
    arrange: async () => {
      const clock = (await gw.admin("GET", "/clock")).body.now as number;
      const made = await clientSetup(gw, { expires_at: new Date((clock + 3600) * 1000).toISOString() });
      await advance(gw, 3601);
      return base(made);
    },
  },
  { reason: "ip_blocked", counts: true, arrange: async () => base(await clientSetup(gw, { ip_deny: ["127.0.0.0/8"] })) },
  { reason: "ip_not_allowed", counts: true, arrange: async () => base(await clientSetup(gw, { ip_allow: ["10.0.0.0/8"] })) },
  {
    reason: "insufficient_scope",
    counts: true,
    arrange: async () => base(await clientSetup(gw, { scopes: ["read"] }), { scope: "write" }),
  },
  { reason: "domain_mismatch", counts: true, arrange: async () => base(await clientSetup(gw), { domain: "example.org" }) },
  {
    reason: "domain_not_verified",
    counts: true,
    arrange: async () => {
      const made = await makeKey(gw, await makeOrg(gw), { domain: "unproven.com" });
      return { made, params: { key: made.key, domain: "unproven.com" } };
    },
  },
  {
    reason: "rate_limited",
    counts: false,
    arrange: async () => {
      const made = await clientSetup(gw, { rate_per_minute: 1 });
      expect((await call({ key: made.key, domain: "example.com" })).status).toBe(200);
      return base(made);
    },
  },
  {
    reason: "usage_limit_exceeded",
    counts: false,
    arrange: async () => {
      const made = await clientSetup(gw, {}, { plan: "free" });
      const snapshot = JSON.parse((await gw.ctx.redis.hget(gw.ctx.keys.orgSnapshot(made.orgId), "json")) ?? "{}");
      await gw.ctx.redis.set(gw.ctx.keys.cycleUsed(made.orgId, snapshot.cycle_anchor_ms), 1000);
      return base(made);
    },
  },
  { reason: "not_found", counts: true, arrange: async () => base(await clientSetup(gw), { content_key: "absent" }) },
];

describe("refusals carry ok:false and the verify reasons, counted like verify", () => {
  for (const c of CASES) {
    it(c.reason, async () => {
      const { made, params } = await c.arrange();
      const before = made ? await usedOf(gw, made.orgId) : 0;
      const answer = await call(params);
      expect(answer.status).toBe(REASONS[c.reason].status);
      expect(answer.body).toEqual({ ok: false, reason: c.reason, message: expect.any(String) });
      expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      if (made) expect(await usedOf(gw, made.orgId)).toBe(before + (c.counts ? 1 : 0));
    });
  }

  it("a malformed body is 400 bad_request", async () => {
    const answer = await gw.call("/api/v1/content.php", {
      method: "POST",
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ ok: false, reason: "bad_request", message: expect.any(String) });
  });
});
