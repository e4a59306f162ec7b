import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertInstallation } from "../../../shared/verify/db/keys.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let orgId: number;
beforeAll(async () => {
  gw = await startTestGateway("installs");
  orgId = (await gw.admin("POST", "/orgs", { name: "Installs", plan: "enterprise" })).body.org.id;
});
afterAll(async () => {
  await gw?.stop();
});

async function newKey(): Promise<number> {
  return (await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "k", kind: "client", domain: "app.example.com" })).body.details.id;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe("installations", () => {
  it("lists none for a new key", async () => {
    const keyId = await newKey();
    const { status, body } = await gw.admin("GET", `/keys/${keyId}/installations`);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, installations: [], total: 0, page: 1, limit: 100, has_more: false });
  });

  it("lists what PostgreSQL knows and what only Redis has seen yet, newest first", async () => {
    const keyId = await newKey();
    const seen = gw.ctx.clock.now() - 60_000;
    await upsertInstallation(gw.ctx.db, { keyId, install: "first", status: "approved", seenMs: seen });
    await upsertInstallation(gw.ctx.db, { keyId, install: "second", status: "pending", seenMs: seen + 1000 });
    await gw.ctx.redis.hset(gw.ctx.keys.installations(orgId, keyId), "first", "approved", "second", "pending", "third", "pending");
    const { body } = await gw.admin("GET", `/keys/${keyId}/installations`);
    expect(body.installations.map((i: { install: string; status: string }) => [i.install, i.status])).toEqual([
      ["third", "pending"],
      ["second", "pending"],
      ["first", "approved"],
    ]);
    for (const i of body.installations) {
      expect(i.first_seen_at).toMatch(ISO);
      expect(i.last_seen_at).toMatch(ISO);
    }
    expect(body.installations[2].first_seen_at).toBe(new Date(Math.floor(seen / 1000) * 1000).toISOString().replace(".000Z", "Z"));
  });

  it("approves and blocks: answer, PostgreSQL, Redis and the activity record agree", async () => {
    const keyId = await newKey();
    await gw.ctx.redis.hset(gw.ctx.keys.installations(orgId, keyId), "tablet-7", "pending");
    const approved = await gw.admin("POST", `/keys/${keyId}/installations/tablet-7/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.installation).toMatchObject({ install: "tablet-7", status: "approved" });
    expect(await gw.ctx.redis.hget(gw.ctx.keys.installations(orgId, keyId), "tablet-7")).toBe("approved");

    const blocked = await gw.admin("POST", `/keys/${keyId}/installations/tablet-7/block`);
    expect(blocked.body.installation).toMatchObject({ install: "tablet-7", status: "blocked" });
    expect(await gw.ctx.redis.hget(gw.ctx.keys.installations(orgId, keyId), "tablet-7")).toBe("blocked");
    const listed = await gw.admin("GET", `/keys/${keyId}/installations`);
    expect(listed.body.installations).toEqual([expect.objectContaining({ install: "tablet-7", status: "blocked" })]);

    // A name with reserved characters travels percent-encoded and comes back decoded.
    const odd = await gw.admin("POST", `/keys/${keyId}/installations/${encodeURIComponent("ios/app é 1")}/approve`);
    expect(odd.body.installation.install).toBe("ios/app é 1");

    const { rows } = await gw.ctx.db.query<{ grp: string; action_code: string; detail: { install: string } }>(
      "SELECT grp, action_code, detail FROM activity WHERE org_id = $1 AND action_code LIKE 'installation.%' AND (detail->>'key_id')::bigint = $2 ORDER BY id",
      [orgId, keyId],
    );
    expect(rows.map((r) => [r.grp, r.action_code, r.detail.install])).toEqual([
      ["trust", "installation.approved", "tablet-7"],
      ["trust", "installation.blocked", "tablet-7"],
      ["trust", "installation.approved", "ios/app é 1"],
    ]);
  });

  it.each([
    ["x".repeat(201), "bad_install"],
    ["a%00b", "bad_install"],
  ])("refuses install %s with %s", async (install, reason) => {
    const keyId = await newKey();
    const r = await gw.admin("POST", `/keys/${keyId}/installations/${install}/approve`);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe(reason);
  });

  it("answers 404 for unknown keys and malformed paths", async () => {
    expect((await gw.admin("GET", "/keys/999999/installations")).status).toBe(404);
    expect((await gw.admin("POST", "/keys/999999/installations/a/approve")).status).toBe(404);
    expect((await gw.admin("POST", "/keys/abc/installations/a/block")).status).toBe(404);
    const keyId = await newKey();
    expect((await gw.admin("POST", `/keys/${keyId}/installations/%E0%A4%A/approve`)).status).toBe(404);
    expect((await gw.admin("POST", `/keys/${keyId}/installations//approve`)).status).toBe(404);
    expect((await gw.admin("POST", `/keys/${keyId}/installations/a/delete`)).status).toBe(404);
    expect((await gw.admin("GET", `/keys/${keyId}/installations/a/approve`)).status).toBe(405);
  });
});
