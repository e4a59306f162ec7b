import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordActivity } from "../../../shared/accounts/activity.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { addMember, assignments, scanNow, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { makeKey, makeOrg, verifyDomain } from "./verify-fixtures.js";

let gw: TestGateway;
let scanner: FakeScanner;
let orgId: number;
let otherOrg: number;
let key: string;
let clientKey: string;

const activity = (params: Record<string, string>) => gw.call("/api/v1/activity.php", { query: params });

beforeAll(async () => {
  gw = await startTestGateway("activity");
  scanner = await startFakeScanner(gw);
  orgId = await makeOrg(gw, { plan: "professional" });
  otherOrg = await makeOrg(gw, { plan: "professional" });
  await verifyDomain(gw, orgId, "a.test");
  await addMember(gw, orgId, "Alice", "alice@example.com");
  key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
  clientKey = (await makeKey(gw, orgId, { name: "Site", kind: "client", domain: "a.test" })).key;
  await scanNow(gw, key, "a.test");
  await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "alice@example.com" });
  const expires = new Date(gw.ctx.clock.now() + 30 * 86_400_000).toISOString();
  await gw.admin("POST", `/orgs/${orgId}/risks`, { domain: "a.test", finding_key: "headers:hsts", note: "later", expires_at: expires });
  // Dated entries for the range filters, and one of another organization.
  for (const [day, domain] of [
    ["2030-01-01", "old.test"],
    ["2030-01-02", "old.test"],
    ["2030-01-03", "old.test"],
  ]) {
    await recordActivity(gw.ctx.db, {
      orgId,
      atMs: Date.parse(`${day}T12:00:00Z`),
      who: "operator",
      via: "admin",
      group: "settings",
      action: `Setting changed on ${day}`,
      actionCode: "settings.changed",
      domain,
    });
  }
  await recordActivity(gw.ctx.db, {
    orgId: otherOrg,
    atMs: gw.ctx.clock.now(),
    who: "x",
    via: "admin",
    group: "settings",
    action: "other org",
    actionCode: "x",
  });
});

afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
});

describe("activity.php", () => {
  it("answers newest first with every field of 2.8, the workflow's and admin changes included, never an address", async () => {
    const res = await activity({ key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, page: 1, has_more: false });
    const times = res.body.activity.map((a: { time: string }) => Date.parse(a.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(res.body.total).toBe(res.body.activity.length);
    for (const entry of res.body.activity)
      expect(Object.keys(entry)).toEqual(expect.arrayContaining(["time", "who", "action", "action_code", "domain", "detail"]));
    const codes = res.body.activity.map((a: { action_code: string }) => a.action_code);
    expect(codes).toEqual(expect.arrayContaining(["finding.assigned", "risk.accepted", "scan.completed"]));
    const assigned = res.body.activity.find((a: { action_code: string }) => a.action_code === "finding.assigned");
    expect(assigned).toMatchObject({ who: "Backend (API key)", via: "api", group: "ownership", domain: "a.test" });
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|::1/);
    expect(codes).not.toContain("x");
  });

  it("filters by group, domain and an inclusive date range", async () => {
    const risks = await activity({ key, group: "risks" });
    expect(risks.body.activity.map((a: { action_code: string }) => a.action_code)).toEqual(["risk.accepted"]);
    const old = await activity({ key, for_domain: "old.test" });
    expect(old.body.total).toBe(3);
    const range = await activity({ key, from: "2030-01-02", to: "2030-01-03" });
    expect(range.body.activity.map((a: { action: string }) => a.action)).toEqual([
      "Setting changed on 2030-01-03",
      "Setting changed on 2030-01-02",
    ]);
    const oneDay = await activity({ key, from: "2030-01-01", to: "2030-01-01" });
    expect(oneDay.body.total).toBe(1);
  });

  it("pages with limit and page", async () => {
    const all = (await activity({ key, limit: "500" })).body;
    const first = await activity({ key, limit: "2" });
    expect(first.body).toMatchObject({ page: 1, has_more: true, total: all.total });
    expect(first.body.activity).toEqual(all.activity.slice(0, 2));
    const second = await activity({ key, limit: "2", page: "2" });
    expect(second.body.activity).toEqual(all.activity.slice(2, 4));
    const last = Math.ceil(all.total / 2);
    expect((await activity({ key, limit: "2", page: String(last) })).body.has_more).toBe(false);
    expect((await activity({ key, limit: "2", page: String(last + 5) })).body.activity).toEqual([]);
  });

  it.each([
    [{ from: "2030-1-1" }, "bad_from"],
    [{ from: "2030-02-30" }, "bad_from"],
    [{ to: "yesterday" }, "bad_to"],
    [{ group: "everything" }, "unknown_group"],
    [{ group: "__proto__" }, "unknown_group"],
    [{ limit: "0" }, "bad_limit"],
    [{ limit: "501" }, "bad_limit"],
    [{ limit: "ten" }, "bad_limit"],
    [{ limit: "-1" }, "bad_limit"],
    [{ page: "0" }, "bad_page"],
    [{ page: "1.5" }, "bad_page"],
    [{ page: "99999999999" }, "bad_page"],
  ])("refuses %j with 400 %s", async (params, reason) => {
    const res = await activity({ key, ...params });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ok: false, reason, message: expect.any(String) });
  });

  it("refuses NUL and lone surrogates with 400 bad_request, never a 5xx", async () => {
    const nul = await activity({ key, for_domain: "a\u0000.test" });
    expect(nul.status).toBe(400);
    expect(nul.body.reason).toBe("bad_request");
    // A lone surrogate survives only in JSON text (a query string turns it into U+FFFD).
    const lone = await gw.call("/api/v1/activity.php", { method: "POST", body: `{"key":"${key}","for_domain":"\\ud800"}` });
    expect(lone.status).toBe(400);
    expect(lone.body.reason).toBe("bad_request");
  });

  it("needs a server key", async () => {
    const res = await activity({ key: clientKey, domain: "a.test" });
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe("server_key_required");
  });
});
