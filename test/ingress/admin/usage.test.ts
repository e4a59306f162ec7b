import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let orgId: number;
let keyId: number;
beforeAll(async () => {
  gw = await startTestGateway("usage");
  orgId = (await gw.admin("POST", "/orgs", { name: "Usage" })).body.org.id;
  keyId = (await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "k", kind: "server" })).body.details.id;
});
afterAll(async () => {
  await gw?.stop();
});

const day = (offsetDays: number) => new Date(gw.ctx.clock.now() + offsetDays * 86400_000).toISOString().slice(0, 10);

describe("GET /keys/:id/usage", () => {
  it("answers an empty list for a key without calls, over the last 30 days by default", async () => {
    const { status, body } = await gw.admin("GET", `/keys/${keyId}/usage`);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, key_id: keyId, from: day(-29), to: day(0), usage: [] });
  });

  it("sums per day: counted, refused, by reason and by endpoint label", async () => {
    const rows = [
      [day(-2), "verify", "ok", 10, 0, 10],
      [day(-2), "verify", "domain_mismatch", 3, 3, 3],
      [day(-2), "content", "ok", 5, 0, 5],
      [day(-1), "verify", "rate_limited", 0, 7, 7],
      [day(-40), "verify", "ok", 99, 0, 99],
    ];
    for (const [d, endpoint, reason, counted, refused, calls] of rows) {
      await gw.ctx.db.query(
        "INSERT INTO usage_daily (key_id, org_id, day, endpoint, reason, counted, refused, calls) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [keyId, orgId, d, endpoint, reason, counted, refused, calls],
      );
    }
    const { body } = await gw.admin("GET", `/keys/${keyId}/usage`);
    expect(body.usage).toEqual([
      {
        day: day(-2),
        calls: 18,
        counted: 18,
        refused: 3,
        by_reason: { ok: 15, domain_mismatch: 3 },
        by_endpoint: { verify: 13, content: 5 },
      },
      { day: day(-1), calls: 7, counted: 0, refused: 7, by_reason: { rate_limited: 7 }, by_endpoint: { verify: 7 } },
    ]);
    const narrow = await gw.admin("GET", `/keys/${keyId}/usage?from=${day(-1)}&to=${day(-1)}`);
    expect(narrow.body.usage.map((u: { day: string }) => u.day)).toEqual([day(-1)]);
    const old = await gw.admin("GET", `/keys/${keyId}/usage?from=${day(-45)}&to=${day(-35)}`);
    expect(old.body.usage).toEqual([expect.objectContaining({ day: day(-40), calls: 99 })]);
    const reversed = await gw.admin("GET", `/keys/${keyId}/usage?from=${day(0)}&to=${day(-5)}`);
    expect(reversed.body.usage).toEqual([]);
  });

  it.each([
    ["from=yesterday", "bad_from"],
    ["from=2024-02-30", "bad_from"],
    ["from=0000-01-01", "bad_from"],
    ["from=2024-1-1", "bad_from"],
    ["from=", "bad_from"],
    ["from=2024-01-01T00:00:00Z", "bad_from"],
    ["to=2024-13-01", "bad_to"],
    ["to=%E0%A4%A", "bad_to"],
    ["from=2024-01-01&to=soon", "bad_to"],
  ])("refuses %s with 400 %s", async (query, reason) => {
    const { status, body } = await gw.admin("GET", `/keys/${keyId}/usage?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ ok: false, reason, message: expect.any(String) });
  });

  it("answers 404 for an unknown key", async () => {
    expect((await gw.admin("GET", "/keys/999999/usage")).body.reason).toBe("not_found");
  });
});
