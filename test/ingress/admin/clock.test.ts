import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let noClock: TestGateway;
let noAdmin: TestGateway;
beforeAll(async () => {
  [gw, noClock, noAdmin] = await Promise.all([
    startTestGateway("clock"),
    startTestGateway("noclock", { GATEWAY_TEST_CLOCK: "" }),
    startTestGateway("noadmin", { ADMIN_TOKEN: "" }),
  ]);
});
afterAll(async () => {
  await Promise.all([gw?.stop(), noClock?.stop(), noAdmin?.stop()]);
});

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe("test clock API", () => {
  it("GET answers now in unix seconds; POST advance_s moves it", async () => {
    const got = await gw.admin("GET", "/clock");
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(["now", "ok"]);
    expect(Math.abs(got.body.now - Date.now() / 1000)).toBeLessThan(5);
    const moved = await gw.admin("POST", "/clock", { advance_s: 90 });
    expect(moved.status).toBe(200);
    expect(moved.body.now).toBeGreaterThanOrEqual(got.body.now + 90);
    expect((await gw.admin("GET", "/clock")).body.now).toBeGreaterThanOrEqual(got.body.now + 90);
    expect((await gw.admin("POST", "/clock", { advance_s: 0.5 })).status).toBe(200);
  });

  it.each([[{}], [{ advance_s: -1 }], [{ advance_s: "60" }], [{ advance_s: null }], [{ advance_s: 1e12 }]])(
    "refuses %j with 400 bad_advance_s and does not move",
    async (input) => {
      const before = (await gw.admin("GET", "/clock")).body.now;
      const r = await gw.admin("POST", "/clock", input);
      expect(r.status).toBe(400);
      expect(r.body.reason).toBe("bad_advance_s");
      expect((await gw.admin("GET", "/clock")).body.now - before).toBeLessThan(5);
    },
  );

  it("needs the admin token", async () => {
    expect((await gw.call("/admin/v1/clock")).status).toBe(401);
    expect((await gw.call("/admin/v1/clock", { method: "POST", body: { advance_s: 1 } })).status).toBe(401);
  });

  it("answers 404 on both methods when GATEWAY_TEST_CLOCK is unset, token or not", async () => {
    for (const headers of [auth, {}]) {
      const get = await noClock.call("/admin/v1/clock", { headers });
      expect(get.status).toBe(404);
      expect(get.body.ok).toBe(false);
      const post = await noClock.call("/admin/v1/clock", { method: "POST", body: { advance_s: 60 }, headers });
      expect(post.status).toBe(404);
    }
    expect(noClock.ctx.testClock).toBeNull();
    expect((await noClock.admin("POST", "/orgs", { name: "still works" })).status).toBe(201);
  });

  it("answers 503 admin_disabled on every admin call when ADMIN_TOKEN is unset", async () => {
    for (const [method, path] of [
      ["POST", "/admin/v1/orgs"],
      ["GET", "/admin/v1/keys/1"],
      ["POST", "/admin/v1/clock"],
    ]) {
      const r = await noAdmin.call(path, { method, body: method === "POST" ? {} : undefined, headers: auth });
      expect(r.status, path).toBe(503);
      expect(r.body, path).toEqual({ ok: false, reason: "admin_disabled", message: expect.any(String) });
    }
  });
});

describe("keys follow the moved clock", () => {
  it("a lapsed subscription expires the keys at the end of the window; renewal brings them back", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Lapsing", plan: "starter" })).body.org;
    const lively = (await gw.admin("POST", "/orgs", { name: "Paying", plan: "starter" })).body.org;
    const key = (await gw.admin("POST", `/orgs/${org.id}/keys`, { name: "k", kind: "server" })).body.details;
    const other = (await gw.admin("POST", `/orgs/${lively.id}/keys`, { name: "k", kind: "server" })).body.details;
    expect(key.status).toBe("active");
    // Admin details carry times in ISO 8601 (operator-api.md), the effective end here.
    const windowEnd = org.cycle_resets_at;
    expect(key.expires_at).toBe(windowEnd);

    const lapsed = await gw.admin("PATCH", `/orgs/${org.id}`, { subscription: "lapsed" });
    expect(lapsed.body.org.subscription).toBe("lapsed");
    let now = await gw.admin("GET", `/keys/${key.id}`);
    expect(now.body.details).toMatchObject({ status: "active", expires_at: windowEnd });

    await gw.admin("POST", "/clock", { advance_s: 29 * 86400 });
    expect((await gw.admin("GET", `/keys/${key.id}`)).body.details.status).toBe("active");
    await gw.admin("POST", "/clock", { advance_s: 2 * 86400 });
    now = await gw.admin("GET", `/keys/${key.id}`);
    expect(now.body.details).toMatchObject({ status: "expired", expires_at: windowEnd });

    // A live subscription's window rolls on: that organization's key stays active.
    const rolled = await gw.admin("GET", `/keys/${other.id}`);
    expect(rolled.body.details.status).toBe("active");
    expect(rolled.body.details.expires_at > windowEnd).toBe(true);
    const livelyNow = (await gw.admin("GET", `/orgs/${lively.id}`)).body.org;
    expect(livelyNow.cycle_started_at > lively.cycle_started_at).toBe(true);

    // Suspended and revoked win over expired.
    const suspended = await gw.admin("POST", `/keys/${key.id}/suspend`);
    expect(suspended.body.details.status).toBe("suspended");
    await gw.admin("POST", `/keys/${key.id}/resume`);

    const renewed = await gw.admin("PATCH", `/orgs/${org.id}`, { subscription: "active" });
    expect(renewed.body.org.subscription).toBe("active");
    const back = await gw.admin("GET", `/keys/${key.id}`);
    expect(back.body.details.status).toBe("active");
    expect(back.body.details.expires_at > windowEnd).toBe(true);
  });

  it("a hard expires_at passes with the clock", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Hard", plan: "starter" })).body.org;
    const inAnHour = new Date(gw.ctx.clock.now() + 3600_000).toISOString();
    const key = (await gw.admin("POST", `/orgs/${org.id}/keys`, { name: "k", kind: "server", expires_at: inAnHour })).body.details;
    expect(key.status).toBe("active");
    await gw.admin("POST", "/clock", { advance_s: 3601 });
    expect((await gw.admin("GET", `/keys/${key.id}`)).body.details.status).toBe("expired");
  });
});
