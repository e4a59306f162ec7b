import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("orgs");
});
afterAll(async () => {
  await gw?.stop();
});

describe("admin orgs", () => {
  it("refuses a missing or wrong token with 401 unauthorized", async () => {
    const none = await gw.call("/admin/v1/orgs", { method: "POST", body: { name: "x" } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ ok: false, reason: "unauthorized", message: expect.any(String) });
    const wrong = await gw.call("/admin/v1/orgs", { method: "POST", body: { name: "x" }, headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
  });

  it("creates an organization with the contract's defaults", async () => {
    const { status, body } = await gw.admin("POST", "/orgs", { name: "Acme" });
    expect(status).toBe(201);
    expect(body.ok).toBe(true);
    expect(body.org).toMatchObject({ name: "Acme", plan: "free", fix_target_days: 30, subscription: "active", allowance: 1000, used: 0 });
    const start = Date.parse(body.org.cycle_started_at);
    expect(Date.parse(body.org.cycle_resets_at) - start).toBe(30 * 86400 * 1000);
  });

  it.each([
    [{ name: "A", plan: "gold" }, "bad_plan"],
    [{}, "missing_name"],
    [{ name: "A", fix_target_days: 0 }, "bad_fix_target_days"],
    [{ name: "A", subscription: "maybe" }, "bad_subscription"],
    [{ name: "A", extra: 1 }, "bad_extra"],
  ])("refuses %j with %s", async (input, reason) => {
    const { status, body } = await gw.admin("POST", "/orgs", input);
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, reason });
  });

  it("refuses a body that is not JSON", async () => {
    const result = await gw.call("/admin/v1/orgs", {
      method: "POST",
      body: "{nope",
      headers: { authorization: "Bearer test-admin-token-0123456789" },
    });
    expect(result.status).toBe(400);
    expect(result.body.reason).toBe("bad_json");
  });

  it("gets and patches, 404 for an unknown org", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Beta", plan: "starter" });
    const id = created.body.org.id;
    const got = await gw.admin("GET", `/orgs/${id}`);
    expect(got.body.org.allowance).toBe(300000);
    const patched = await gw.admin("PATCH", `/orgs/${id}`, { plan: "enterprise", name: "Beta2" });
    expect(patched.body.org).toMatchObject({ plan: "enterprise", name: "Beta2", allowance: null });
    expect((await gw.admin("GET", "/orgs/999999")).status).toBe(404);
    expect((await gw.admin("GET", "/orgs/abc")).status).toBe(404);
  });

  it("adds members, 409 on a duplicate email, records activity without addresses", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Gamma" });
    const id = created.body.org.id;
    const member = await gw.admin("POST", `/orgs/${id}/members`, { name: "Ann", email: "ann@example.com", role: "owner" });
    expect(member.status).toBe(201);
    expect(member.body.member).toMatchObject({ name: "Ann", email: "ann@example.com", role: "owner" });
    expect((await gw.admin("POST", `/orgs/${id}/members`, { name: "Ann", email: "ANN@example.com" })).status).toBe(409);
    expect((await gw.admin("POST", `/orgs/${id}/members`, { name: "Bob", email: "not-an-email" })).body.reason).toBe("bad_email");
    const { rows } = await gw.ctx.db.query("SELECT grp, action_code FROM activity WHERE org_id = $1 ORDER BY id", [id]);
    expect(rows.map((r) => r.action_code)).toEqual(["org.created", "member.added"]);
  });

  it("answers unknown endpoints and methods with reasons", async () => {
    expect((await gw.call("/nope")).body).toEqual({ ok: false, reason: "unknown_endpoint", message: expect.any(String) });
    const wrongMethod = await gw.call("/admin/v1/orgs", { method: "DELETE", headers: { authorization: "Bearer x" } });
    expect(wrongMethod.status).toBe(405);
  });

  it("moves the test clock", async () => {
    const before = (await gw.admin("GET", "/clock")).body.now;
    const moved = await gw.admin("POST", "/clock", { advance_s: 3600 });
    expect(moved.body.now).toBeGreaterThanOrEqual(before + 3600);
  });
});
