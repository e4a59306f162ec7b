import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, makeKey, usedOf, verify } from "./verify-fixtures.js";

/** Deviations from interface.md found by reading the code (docs/security.md, item 11). */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("contractdev");
});
afterAll(async () => {
  await gw?.stop();
});

const budgetHeaders = (headers: Headers) => ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"].map((h) => headers.get(h));

describe("scan.php: every response carries the rate-limit headers (section 8)", () => {
  it("also a malformed request, a missing key and an unknown key (the organization unknown: limit 10, nothing spent)", async () => {
    const cases = [
      { reason: "bad_request", answer: await gw.call("/api/v1/scan.php", { method: "POST", body: "[1]" }) },
      { reason: "missing_key", answer: await gw.call("/api/v1/scan.php", { query: { domain: "example.com" } }) },
      { reason: "invalid_key", answer: await gw.call("/api/v1/scan.php", { query: { key: "sk_live_nosuchkey", domain: "example.com" } }) },
    ];
    for (const { reason, answer } of cases) {
      expect([reason, answer.body.reason]).toEqual([reason, reason]);
      const [limit, remaining, reset] = budgetHeaders(answer.headers);
      expect([reason, limit, remaining]).toEqual([reason, "10", "10"]);
      expect(Number(reset) % 3600).toBe(0);
    }
  });
});

describe("scan.php: a client key learns nothing of the organization's scan budget", () => {
  it("its server_key_required refusal carries the unknown-budget headers; a server key's answer the real ones", async () => {
    const made = await clientSetup(gw);
    const server = await makeKey(gw, made.orgId, { name: "Backend", kind: "server", domain: undefined });
    // The organization spent 7 of its 10 fresh scans this hour.
    const hour = Math.floor(gw.ctx.clock.nowSeconds() / 3600);
    await gw.ctx.redis.set(gw.ctx.keys.scanBudget(made.orgId, hour), "7", "EX", 3700);
    const own = await gw.call("/api/v1/scan.php", { method: "POST", body: { key: server.key } });
    expect(own.body.reason).toBe("missing_domain");
    expect(budgetHeaders(own.headers).slice(0, 2)).toEqual(["10", "3"]);
    for (const method of ["GET", "POST"]) {
      const params = { key: made.key, domain: "example.com" };
      const refused = await gw.call("/api/v1/scan.php", method === "GET" ? { query: params } : { method, body: params });
      expect([method, refused.status, refused.body.reason]).toEqual([method, 403, "server_key_required"]);
      const [limit, remaining, reset] = budgetHeaders(refused.headers);
      expect([method, limit, remaining]).toEqual([method, "10", "10"]);
      expect(Number(reset)).toBe((hour + 1) * 3600);
    }
  });
});

describe("HEAD verify.php", () => {
  it("is 405 with Allow: GET, POST, and charges nothing", async () => {
    const made = await clientSetup(gw);
    const before = await usedOf(gw, made.orgId);
    const head = await gw.call("/api/v1/verify.php", { method: "HEAD", query: { key: made.key, domain: "example.com" } });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET, POST");
    expect(await usedOf(gw, made.orgId)).toBe(before);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    expect(await usedOf(gw, made.orgId)).toBe(before + 1);
  });
});
