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

/** Dates the usage reads refuse, and the reason each gets. */
const BAD_DATES: [string, string][] = [
  ["from=yesterday", "bad_from"],
  ["from=2024-02-30", "bad_from"],
  ["from=0000-01-01", "bad_from"],
  ["from=2024-1-1", "bad_from"],
  ["from=", "bad_from"],
  ["from=2024-01-01T00:00:00Z", "bad_from"],
  ["to=2024-13-01", "bad_to"],
  ["to=%E0%A4%A", "bad_to"],
  ["from=2024-01-01&to=soon", "bad_to"],
];

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

  it.each(BAD_DATES)("refuses %s with 400 %s", async (query, reason) => {
    const { status, body } = await gw.admin("GET", `/keys/${keyId}/usage?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ ok: false, reason, message: expect.any(String) });
  });

  it("answers 404 for an unknown key", async () => {
    expect((await gw.admin("GET", "/keys/999999/usage")).body.reason).toBe("not_found");
  });
});

describe("GET /orgs/:org/usage", () => {
  let org: number;
  let other: number;
  let keyA: number;
  let keyB: number;
  const insert = async (key: number, owner: number, rows: [string, string, string, number, number, number][]) => {
    for (const [d, endpoint, reason, counted, refused, calls] of rows) {
      await gw.ctx.db.query(
        "INSERT INTO usage_daily (key_id, org_id, day, endpoint, reason, counted, refused, calls) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [key, owner, d, endpoint, reason, counted, refused, calls],
      );
    }
  };

  beforeAll(async () => {
    org = (await gw.admin("POST", "/orgs", { name: "Summed", plan: "enterprise" })).body.org.id;
    other = (await gw.admin("POST", "/orgs", { name: "Elsewhere", plan: "enterprise" })).body.org.id;
    keyA = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "a", kind: "server" })).body.details.id;
    keyB = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "b", kind: "server" })).body.details.id;
    const keyC = (await gw.admin("POST", `/orgs/${other}/keys`, { name: "c", kind: "server" })).body.details.id;
    await insert(keyA, org, [
      [day(-3), "verify", "ok", 10, 0, 10],
      [day(-3), "verify", "domain_mismatch", 2, 2, 2],
      [day(-1), "content", "ok", 4, 0, 4],
      [day(-1), "constructor", "ok", 1, 0, 1],
    ]);
    await insert(keyB, org, [
      [day(-3), "verify", "ok", 5, 0, 5],
      [day(-3), "checkout", "rate_limited", 0, 6, 6],
      [day(-2), "verify", "ok", 3, 0, 3],
      [day(-60), "verify", "ok", 70, 0, 70],
    ]);
    // Another organization's key, on the same days: never in this organization's sums.
    await insert(keyC, other, [
      [day(-3), "verify", "ok", 1000, 0, 1000],
      [day(-2), "verify", "ok", 1000, 0, 1000],
    ]);
    // A revoked key's calls were made: they stay in the sums.
    await gw.admin("POST", `/keys/${keyB}/revoke`);
  });

  it("sums every key's days: calls, counted, refused, by reason and by endpoint label; another organization's keys excluded", async () => {
    const { status, body } = await gw.admin("GET", `/orgs/${org}/usage`);
    expect(status).toBe(200);
    expect(body).toEqual({
      ok: true,
      org_id: org,
      from: day(-29),
      to: day(0),
      usage: [
        {
          day: day(-3),
          calls: 23,
          counted: 17,
          refused: 8,
          by_reason: { ok: 15, domain_mismatch: 2, rate_limited: 6 },
          by_endpoint: { verify: 17, checkout: 6 },
        },
        { day: day(-2), calls: 3, counted: 3, refused: 0, by_reason: { ok: 3 }, by_endpoint: { verify: 3 } },
        {
          day: day(-1),
          calls: 5,
          counted: 5,
          refused: 0,
          by_reason: { ok: 5 },
          by_endpoint: { content: 4, constructor: 1 } as Record<string, number>,
        },
      ],
    });
    // A label named like a property of Object.prototype is a label like any other.
    expect(Object.hasOwn(body.usage[2].by_endpoint, "constructor")).toBe(true);
    const key = await gw.admin("GET", `/keys/${keyA}/usage?from=${day(-3)}&to=${day(-3)}`);
    expect(key.body.usage[0].calls).toBe(12);
  });

  it("answers the range asked for, both days included", async () => {
    const narrow = await gw.admin("GET", `/orgs/${org}/usage?from=${day(-2)}&to=${day(-2)}`);
    expect(narrow.body).toMatchObject({ from: day(-2), to: day(-2) });
    expect(narrow.body.usage.map((u: { day: string; calls: number }) => [u.day, u.calls])).toEqual([[day(-2), 3]]);
    const old = await gw.admin("GET", `/orgs/${org}/usage?from=${day(-90)}&to=${day(-30)}`);
    expect(old.body.usage).toEqual([expect.objectContaining({ day: day(-60), calls: 70 })]);
    // 400 days, both ends included, is the longest range.
    const longest = await gw.admin("GET", `/orgs/${org}/usage?from=${day(-399)}&to=${day(0)}`);
    expect(longest.status).toBe(200);
    expect(longest.body.usage.map((u: { day: string }) => u.day)).toEqual([day(-60), day(-3), day(-2), day(-1)]);
    const empty = await gw.admin("GET", `/orgs/${other}/usage?from=${day(-1)}&to=${day(-1)}`);
    expect(empty.body).toEqual({ ok: true, org_id: other, from: day(-1), to: day(-1), usage: [] });
  });

  it.each(BAD_DATES)("refuses %s with 400 %s", async (query, reason) => {
    const { status, body } = await gw.admin("GET", `/orgs/${org}/usage?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ ok: false, reason, message: expect.any(String) });
  });

  it("refuses a range that runs backwards or spans more than 400 days, naming the end the caller sent", async () => {
    const cases: [string, string, string][] = [
      [`from=${day(0)}&to=${day(-1)}`, "bad_from", "after to"],
      [`from=${day(1)}`, "bad_from", "after to"],
      [`to=${day(-30)}`, "bad_to", "before from"],
      [`from=${day(-400)}&to=${day(0)}`, "bad_from", "the range spans more than 400 days"],
      [`from=${day(-400)}`, "bad_from", "the range spans more than 400 days"],
      [`to=${day(400)}`, "bad_to", "the range spans more than 400 days"],
    ];
    for (const [query, reason, detail] of cases) {
      const { status, body } = await gw.admin("GET", `/orgs/${org}/usage?${query}`);
      expect(status, query).toBe(400);
      expect(body, query).toEqual({ ok: false, reason, detail, message: expect.any(String) });
    }
  });

  it("a read-only token of the organization may read it; another organization's token and a missing organization get 404", async () => {
    const reader = (await gw.admin("POST", `/orgs/${org}/tokens`, { name: "reader", scopes: ["read"] })).body.token;
    const stranger = (await gw.admin("POST", `/orgs/${other}/tokens`, { name: "stranger", scopes: ["read", "write"] })).body.token;
    const as = (token: string, path: string) => gw.call(`/admin/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    const mine = await as(reader, `/orgs/${org}/usage`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual((await gw.admin("GET", `/orgs/${org}/usage`)).body);
    const theirs = await as(stranger, `/orgs/${org}/usage`);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
    // Refused before the query is read: the same answer whatever the range.
    expect((await as(stranger, `/orgs/${org}/usage?from=nonsense`)).body).toEqual(theirs.body);
    const missing = await gw.admin("GET", "/orgs/999999/usage");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(theirs.body);
  });
});
