import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../ops/cli.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, makeKey, verify, type MadeKey } from "../routes/verify-fixtures.js";

/**
 * Rotation with a grace period (operator-api.md section 5, docs/verify.md "Rotation"): both
 * keys work until the grace ends, the old one is refused invalid_key from then on (the test
 * clock moves the service's clock), and the ingress's retirement sweep revokes it for good
 * and hands over what it saw. No usage actor runs here: Redis is all the gateway knows of
 * recent installations, the worst case of the actor's lag.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("rotation");
});
afterAll(async () => {
  await gw?.stop();
});

const reasonOf = async (key: string, extra: Record<string, unknown> = {}) =>
  (await verify(gw, { key, domain: "example.com", ...extra })).body.reason as string;

const clockNow = async () => (await gw.admin("GET", "/clock")).body.now as number;

async function rotate(made: MadeKey, body: Record<string, unknown>): Promise<MadeKey> {
  const rotated = await gw.admin("POST", `/keys/${made.id}/rotate`, body);
  expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
  return { key: rotated.body.key, id: rotated.body.details.id, orgId: made.orgId, details: rotated.body.details };
}

async function statusInPostgres(keyId: number): Promise<string> {
  const { rows } = await gw.ctx.db.query<{ status: string }>("SELECT status FROM api_keys WHERE id = $1", [keyId]);
  return rows[0].status;
}

describe("grace_s", () => {
  it.each([[-1], [604_801], [1.5], ["60"], [null], [true]])("refuses grace_s %j with 400 bad_grace_s", async (grace) => {
    const made = await clientSetup(gw);
    const answer = await gw.admin("POST", `/keys/${made.id}/rotate`, { grace_s: grace });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ ok: false, reason: "bad_grace_s" });
    expect(await reasonOf(made.key)).toBe("ok");
  });

  it("defaults to 0: the old key is refused at once", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key)).toBe("ok");
    const fresh = await rotate(made, {});
    expect(await reasonOf(made.key)).toBe("invalid_key");
    expect(await reasonOf(fresh.key)).toBe("ok");
    expect((await gw.admin("GET", `/keys/${made.id}`)).body.details).toMatchObject({ status: "revoked", retires_at: null });
  });

  it("accepts the bounds 0 and 604800", async () => {
    const made = await clientSetup(gw);
    const fresh = await rotate(made, { grace_s: 0 });
    const again = await rotate(fresh, { grace_s: 604_800 });
    expect(await reasonOf(fresh.key)).toBe("ok");
    expect(await reasonOf(again.key)).toBe("ok");
  });
});

describe("rotation with a grace period", () => {
  it("both keys work until the grace ends; the old one is refused invalid_key after it, then retired for good", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key)).toBe("ok");
    const before = await clockNow();
    const fresh = await rotate(made, { grace_s: 3600 });
    const after = await clockNow();
    expect(fresh.details).toMatchObject({ status: "active", rotated_from: made.id, retires_at: null });

    const old = (await gw.admin("GET", `/keys/${made.id}`)).body.details;
    expect(old.status).toBe("active");
    const retiresAt = Date.parse(old.retires_at) / 1000;
    expect(retiresAt).toBeGreaterThanOrEqual(before + 3600);
    expect(retiresAt).toBeLessThanOrEqual(after + 3601);
    expect(await reasonOf(made.key)).toBe("ok");
    expect(await reasonOf(fresh.key)).toBe("ok");

    // A minute before the end (the clock runs on meanwhile: a margin, not an instant).
    await advance(gw, Math.floor(retiresAt) - (await clockNow()) - 60);
    expect(await reasonOf(made.key)).toBe("ok");
    expect((await gw.admin("GET", `/keys/${made.id}`)).body.details.status).toBe("active");

    await advance(gw, 120);
    const refused = await verify(gw, { key: made.key, domain: "example.com" });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ authorized: false, reason: "invalid_key" });
    expect(refused.body).not.toHaveProperty("key");
    expect((await gw.admin("GET", `/keys/${made.id}`)).body.details.status).toBe("revoked");
    expect(await reasonOf(fresh.key)).toBe("ok");

    // The sweep revokes it in PostgreSQL, drops its snapshot, and records it.
    await waitFor(async () => (await statusInPostgres(made.id)) === "revoked");
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.keySnapshot(made.orgId, made.id))) === 0);
    const { rows } = await gw.ctx.db.query(
      "SELECT who, grp, action_code, detail FROM activity WHERE org_id = $1 AND action_code = 'key.retired'",
      [made.orgId],
    );
    expect(rows).toEqual([
      expect.objectContaining({ who: "system", grp: "team_security", detail: expect.objectContaining({ key_id: made.id }) }),
    ]);
    expect(await reasonOf(made.key)).toBe("invalid_key");
    // Nothing more to do: another move of the clock retires nothing twice.
    await advance(gw, 60);
    expect((await gw.ctx.db.query("SELECT 1 FROM activity WHERE org_id = $1 AND action_code = 'key.retired'", [made.orgId])).rowCount).toBe(
      1,
    );
  });

  it("a revocation of the old key during the grace takes effect at once", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key)).toBe("ok");
    const fresh = await rotate(made, { grace_s: 3600 });
    expect(await reasonOf(made.key)).toBe("ok");
    expect((await gw.admin("POST", `/keys/${made.id}/revoke`)).status).toBe(200);
    expect(await reasonOf(made.key)).toBe("invalid_key");
    expect(await reasonOf(fresh.key)).toBe("ok");
  });

  it("a key in its grace is not rotated again (409); its successor is", async () => {
    const made = await clientSetup(gw);
    const fresh = await rotate(made, { grace_s: 600 });
    const again = await gw.admin("POST", `/keys/${made.id}/rotate`, { grace_s: 600 });
    expect(again.status).toBe(409);
    expect(again.body.reason).toBe("conflict");
    const third = await rotate(fresh, {});
    expect(await reasonOf(third.key)).toBe("ok");
    expect(await reasonOf(fresh.key)).toBe("invalid_key");
    expect(await reasonOf(made.key)).toBe("ok");
  });

  it("a key in its grace does not take a place of the plan's key count", async () => {
    const made = await clientSetup(gw, {}, { plan: "starter" });
    await makeKey(gw, made.orgId, { name: "Second" });
    await rotate(made, { grace_s: 600 });
    // starter: 3 keys. Live: the second and the new one; the old one is on its way out.
    expect((await gw.admin("POST", `/orgs/${made.orgId}/keys`, { name: "Third", kind: "client", domain: "example.com" })).status).toBe(201);
    expect(
      (await gw.admin("POST", `/orgs/${made.orgId}/keys`, { name: "Fourth", kind: "client", domain: "example.com" })).body.reason,
    ).toBe("key_limit_reached");
  });

  it("keeps at most one key in a grace per live key: no chain of rotations keeps old keys working past the plan's count", async () => {
    const made = await clientSetup(gw, {}, { plan: "free" });
    const b = await rotate(made, { grace_s: 3600 });
    // Rotating the successor with a grace again would leave made, b and c all working on a one-key plan.
    const chained = await gw.admin("POST", `/keys/${b.id}/rotate`, { grace_s: 3600 });
    expect(chained.status).toBe(409);
    expect(chained.body).toMatchObject({ ok: false, reason: "conflict" });
    expect(await reasonOf(b.key)).toBe("ok");
    // Without a grace it may (b ends at once), but the next graceful one waits for made's grace to end.
    const c = await rotate(b, {});
    expect(await reasonOf(b.key)).toBe("invalid_key");
    expect((await gw.admin("POST", `/keys/${c.id}/rotate`, { grace_s: 3600 })).status).toBe(409);
    const working = async () => (await Promise.all([made, b, c].map(async (k) => (await reasonOf(k.key)) === "ok"))).filter(Boolean).length;
    expect(await working()).toBe(2);
    // Once made's grace has ended, c may be rotated with a grace.
    await advance(gw, 3601);
    const d = await rotate(c, { grace_s: 600 });
    expect(await reasonOf(d.key)).toBe("ok");
    expect(await reasonOf(c.key)).toBe("ok");
    expect(await reasonOf(made.key)).toBe("invalid_key");
  });
});

describe("installations through a rotation with grace", () => {
  it("the new key starts with every installation the old one had, and owners' decisions apply to both during the grace", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "site-b" })).toBe("installation_pending");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/site-b/approve`)).status).toBe(200);
    const fresh = await rotate(made, { grace_s: 3600 });
    // Seen moments ago, known only to Redis: the new key honours them at once.
    expect(await reasonOf(fresh.key, { install: "site-a" })).toBe("ok");
    expect(await reasonOf(fresh.key, { install: "site-b" })).toBe("ok");

    // Seen on the old key during the grace, approved on its page: the new key honours it too.
    expect(await reasonOf(made.key, { install: "site-c" })).toBe("installation_pending");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/site-c/approve`)).status).toBe(200);
    expect(await reasonOf(fresh.key, { install: "site-c" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "site-c" })).toBe("ok");
    // Blocked on the new key's page: refused on both.
    expect(await reasonOf(fresh.key, { install: "intruder" })).toBe("installation_pending");
    expect((await gw.admin("POST", `/keys/${fresh.id}/installations/intruder/block`)).status).toBe(200);
    expect(await reasonOf(made.key, { install: "intruder" })).toBe("installation_blocked");
    expect(await reasonOf(fresh.key, { install: "intruder" })).toBe("installation_blocked");

    // Seen only on the old key during the grace: handed over when the old key retires.
    expect(await reasonOf(made.key, { install: "site-d" })).toBe("installation_pending");
    await advance(gw, 3600 + 60);
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("invalid_key");
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.installations(made.orgId, made.id))) === 0);
    expect(await gw.ctx.redis.hgetall(gw.ctx.keys.installations(made.orgId, fresh.id))).toMatchObject({
      "site-a": "approved",
      "site-b": "approved",
      "site-c": "approved",
      intruder: "blocked",
      "site-d": "pending",
    });
    expect(await reasonOf(fresh.key, { install: "site-d" })).toBe("installation_pending");
    // PostgreSQL holds them for the new key too (the projection's transaction, committed just after), so a Redis loss restores them.
    const rows = await waitFor(async () => {
      const found = await gw.ctx.db.query("SELECT install, status FROM installations WHERE key_id = $1 ORDER BY install", [fresh.id]);
      return found.rows.some((r) => r.install === "site-d") ? found.rows : null;
    });
    expect(rows).toEqual(
      expect.arrayContaining([
        { install: "site-a", status: "approved" },
        { install: "site-b", status: "approved" },
        { install: "site-c", status: "approved" },
        { install: "intruder", status: "blocked" },
        { install: "site-d", status: "pending" },
      ]),
    );
  });

  it("at the hand-over an owner's decision on the old key beats a mere pending on the new one", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("ok");
    const fresh = await rotate(made, { grace_s: 600 });
    // Both keys see site-e for the first time during the grace: pending on each.
    expect(await reasonOf(made.key, { install: "site-e" })).toBe("installation_pending");
    expect(await reasonOf(fresh.key, { install: "site-e" })).toBe("installation_pending");
    // The old key's decision as Redis holds it when the grace ends (as an approval made just before the rotation would be).
    await gw.ctx.redis.hset(gw.ctx.keys.installations(made.orgId, made.id), "site-e", "approved");
    await advance(gw, 600 + 60);
    // Handed over once the old key's hash is gone (the sweep's projection, after its commit).
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.installations(made.orgId, made.id))) === 0);
    expect(await reasonOf(fresh.key, { install: "site-e" })).toBe("ok");
    // PostgreSQL follows in the projection's transaction, committed just after.
    await waitFor(
      async () =>
        (await gw.ctx.db.query("SELECT 1 FROM installations WHERE key_id = $1 AND install = 'site-e' AND status = 'approved'", [fresh.id]))
          .rowCount === 1,
    );
  });
});

describe("gateway key rotate --grace-s", () => {
  it("rotates with a grace from the command line and shows when the old key retires", async () => {
    const made = await clientSetup(gw);
    const state = { out: "", err: "" };
    const io = { stdout: { write: (t: string) => (state.out += t) }, stderr: { write: (t: string) => (state.err += t) } };
    const env = { ...gw.env, SITE_URL: gw.url };
    expect(await runCli(["key", "rotate", String(made.id), "--grace-s", "900"], env, io)).toBe(0);
    expect(state.out).toContain(`replaces key ${made.id}, which works 900 s more`);
    const fresh = /\b(ak_live_[A-Za-z0-9]+)\b/.exec(state.out)?.[1] ?? "";
    expect(await reasonOf(fresh)).toBe("ok");
    expect(await reasonOf(made.key)).toBe("ok");
    state.out = "";
    expect(await runCli(["key", "get", String(made.id)], env, io)).toBe(0);
    expect(state.out).toMatch(/retires\s+\S+Z \(replaced by a rotation\)/);
    expect(await runCli(["key", "rotate", String(made.id), "--grace-s", "soon"], env, io)).toBe(1);
    expect(state.err).toContain("bad_grace_s");
  });
});
