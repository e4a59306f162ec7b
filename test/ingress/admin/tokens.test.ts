import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOrgToken } from "../../../shared/accounts/token-format.js";
import { sha256 } from "../../../shared/platform/crypto/hash.js";
import { insertOrg } from "../../../shared/accounts/db/orgs.js";
import { insertToken } from "../../../shared/accounts/db/tokens.js";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/** Organization tokens and GET /me (operator-api.md section 5). */

let gw: TestGateway;
let noAdmin: TestGateway;
let orgId: number;

beforeAll(async () => {
  [gw, noAdmin] = await Promise.all([startTestGateway("tokens"), startTestGateway("tokens-noadmin", { ADMIN_TOKEN: "" })]);
  orgId = (await gw.admin("POST", "/orgs", { name: "Tokens Inc", plan: "enterprise" })).body.org.id;
});
afterAll(async () => {
  await Promise.all([gw?.stop(), noAdmin?.stop()]);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const as = (token: string, method: string, path: string, body?: unknown) =>
  gw.call(`/admin/v1${path}`, { method, headers: bearer(token), body: method === "GET" ? undefined : (body ?? {}) });

async function mint(scopes: string[], extra: Record<string, unknown> = {}): Promise<{ token: string; details: Record<string, unknown> }> {
  const res = await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: `t-${scopes.join("-")}`, scopes, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function lastUsed(id: unknown): Promise<number | null> {
  const { rows } = await gw.ctx.db.query<{ last_used_at: Date | null }>("SELECT last_used_at FROM org_tokens WHERE id = $1", [id]);
  return rows[0].last_used_at?.getTime() ?? null;
}

describe("POST /orgs/:org/tokens", () => {
  it("shows the token once, in the documented format, and stores only its SHA-256", async () => {
    const res = await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: "ci", scopes: ["read", "write"] });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^gwt_[0-9A-Za-z]{38}$/);
    expect(Object.keys(res.body.details).sort()).toEqual(
      expect.arrayContaining(["created_at", "expires_at", "id", "last_used_at", "name", "prefix", "scopes"]),
    );
    expect(res.body.details).toMatchObject({ name: "ci", scopes: ["read", "write"], last_used_at: null, expires_at: null });
    expect(res.body.token.startsWith(res.body.details.prefix)).toBe(true);
    expect(res.body.details.prefix.length).toBeLessThan(16);
    const { rows } = await gw.ctx.db.query("SELECT * FROM org_tokens WHERE id = $1", [res.body.details.id]);
    expect(rows[0].token_hash).toEqual(sha256(res.body.token));
    expect(JSON.stringify(rows[0])).not.toContain(res.body.token.slice(10));
    const listed = await gw.admin("GET", `/orgs/${orgId}/tokens`);
    expect(JSON.stringify(listed.body)).not.toContain(res.body.token);
    const { rows: activity } = await gw.ctx.db.query(
      "SELECT grp, action_code, who, detail FROM activity WHERE org_id = $1 AND action_code = 'token.created' ORDER BY id DESC LIMIT 1",
      [orgId],
    );
    expect(activity[0]).toMatchObject({
      grp: "team_security",
      who: "operator",
      detail: { token_id: res.body.details.id, prefix: res.body.details.prefix },
    });
    expect(JSON.stringify(activity[0])).not.toContain(res.body.token);
  });

  it.each([
    [{ scopes: ["read"] }, "missing_name"],
    [{ name: "x" }, "missing_scopes"],
    [{ name: "x", scopes: [] }, "bad_scopes"],
    [{ name: "x", scopes: ["write"] }, "bad_scopes"],
    [{ name: "x", scopes: ["read", "admin"] }, "bad_scopes"],
    [{ name: "x", scopes: ["read", "read"] }, "bad_scopes"],
    [{ name: "x", scopes: ["read"], expires_at: "tomorrow" }, "bad_expires_at"],
    [{ name: "x", scopes: ["read"], expires_at: "2001-01-01T00:00:00Z" }, "bad_expires_at"],
    [{ name: "", scopes: ["read"] }, "bad_name"],
    [{ name: "x", scopes: ["read"], extra: 1 }, "bad_extra"],
  ])("refuses %j with 400 %s", async (body, reason) => {
    const res = await gw.admin("POST", `/orgs/${orgId}/tokens`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, reason });
  });

  it("404s for an organization that does not exist", async () => {
    expect((await gw.admin("POST", "/orgs/999999/tokens", { name: "x", scopes: ["read"] })).status).toBe(404);
  });

  it("accepts scopes in either order and keeps the two shapes", async () => {
    const { details } = await mint(["write", "read"]);
    expect(details.scopes).toEqual(["read", "write"]);
  });
});

describe("a token as credential", () => {
  it("reaches its organization: reads with read, writes with write", async () => {
    const read = await mint(["read"]);
    const write = await mint(["read", "write"]);
    expect((await as(read.token, "GET", `/orgs/${orgId}`)).status).toBe(200);
    const refused = await as(read.token, "PUT", `/orgs/${orgId}/content/hello`, { type: "text", value: "hi" });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ ok: false, reason: "insufficient_scope", message: expect.any(String) });
    expect((await as(write.token, "PUT", `/orgs/${orgId}/content/hello`, { type: "text", value: "hi" })).status).toBe(200);
  });

  it("never mints tokens or members (403 forbidden), whatever its scopes", async () => {
    const write = await mint(["read", "write"]);
    const token = await as(write.token, "POST", `/orgs/${orgId}/tokens`, { name: "child", scopes: ["read"] });
    expect(token.status).toBe(403);
    expect(token.body).toEqual({ ok: false, reason: "forbidden", message: expect.any(String) });
    const member = await as(write.token, "POST", `/orgs/${orgId}/members`, { name: "M", email: "m@example.com", role: "owner" });
    expect(member.status).toBe(403);
    expect(member.body).toEqual({ ok: false, reason: "forbidden", message: expect.any(String) });
    const { rows } = await gw.ctx.db.query("SELECT count(*)::int AS n FROM members WHERE org_id = $1", [orgId]);
    expect(rows[0].n).toBe(0);
  });

  it("is refused from the next call on once revoked", async () => {
    const { token, details } = await mint(["read", "write"]);
    expect((await as(token, "GET", "/me")).status).toBe(200);
    const revoked = await gw.admin("DELETE", `/orgs/${orgId}/tokens/${details.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked).toMatchObject({ id: details.id, name: details.name });
    const after = await as(token, "GET", "/me");
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ ok: false, reason: "unauthorized", message: expect.any(String) });
    expect((await gw.admin("DELETE", `/orgs/${orgId}/tokens/${details.id}`)).status).toBe(404);
    const listed = await gw.admin("GET", `/orgs/${orgId}/tokens`);
    expect(listed.body.tokens.map((t: { id: number }) => t.id)).not.toContain(details.id);
    const { rows } = await gw.ctx.db.query("SELECT who, grp FROM activity WHERE org_id = $1 AND action_code = 'token.revoked'", [orgId]);
    expect(rows).toContainEqual({ who: "operator", grp: "team_security" });
  });

  it("may revoke itself, and is refused right after", async () => {
    const { token, details } = await mint(["read", "write"]);
    expect((await as(token, "DELETE", `/orgs/${orgId}/tokens/${details.id}`)).status).toBe(200);
    expect((await as(token, "GET", "/me")).status).toBe(401);
    const { rows } = await gw.ctx.db.query("SELECT revoked_by FROM org_tokens WHERE id = $1", [details.id]);
    expect(rows[0].revoked_by).toBe(`token:${details.name}`);
  });

  it("expires at expires_at on the service's clock", async () => {
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    const { token, details } = await mint(["read"], { expires_at: new Date((now + 3600) * 1000).toISOString() });
    expect(details.expires_at).toBe(new Date((now + 3600) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"));
    expect((await as(token, "GET", "/me")).status).toBe(200);
    await gw.admin("POST", "/clock", { advance_s: 3601 });
    const expired = await as(token, "GET", "/me");
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ ok: false, reason: "unauthorized", message: expect.any(String) });
    const listed = await gw.admin("GET", `/orgs/${orgId}/tokens`);
    expect(listed.body.tokens.map((t: { id: number }) => t.id)).not.toContain(details.id);
  });

  it("stamps last_used_at, at most once a minute", async () => {
    const { token, details } = await mint(["read"]);
    expect(await lastUsed(details.id)).toBeNull();
    const before = gw.ctx.clock.now();
    await as(token, "GET", "/me");
    const first = await lastUsed(details.id);
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThanOrEqual(gw.ctx.clock.now());
    await gw.admin("POST", "/clock", { advance_s: 30 });
    await as(token, "GET", "/me");
    expect(await lastUsed(details.id)).toBe(first);
    await gw.admin("POST", "/clock", { advance_s: 31 });
    await as(token, "GET", "/me");
    const second = await lastUsed(details.id);
    expect(second).toBeGreaterThanOrEqual((first as number) + 61_000);
    const listed = await gw.admin("GET", `/orgs/${orgId}/tokens`);
    const shown = listed.body.tokens.find((t: { id: number }) => t.id === details.id);
    expect(Date.parse(shown.last_used_at)).toBe(Math.floor((second as number) / 1000) * 1000);
  });

  it("refuses a mistyped token without a database lookup", async () => {
    const { token } = await mint(["read"]);
    const typo = `${token.slice(0, 20)}${token[20] === "A" ? "B" : "A"}${token.slice(21)}`;
    const pool = gw.ingress.deps.db;
    const query = pool.query.bind(pool);
    // Token lookups only: the gateway's own background work (a previous call's last-use
    // write, a refresh) may query meanwhile.
    let queries = 0;
    pool.query = ((...args: Parameters<typeof query>) => {
      const [sql] = args as unknown[];
      const text = typeof sql === "string" ? sql : String((sql as { text?: unknown } | null)?.text ?? "");
      if (text.includes("token_hash")) queries++;
      return query(...args);
    }) as typeof pool.query;
    try {
      for (const bad of [typo, token.slice(0, -1), `${token}x`, "gwt_", "gwt_!!"]) {
        const res = await as(bad, "GET", "/me");
        expect(res.status, bad).toBe(401);
        expect(res.body).toEqual({ ok: false, reason: "unauthorized", message: expect.any(String) });
      }
      expect(queries).toBe(0);
      // A well-formed token that was never issued does need the lookup, and is refused the same way.
      const unknown = await as(newOrgToken().token, "GET", "/me");
      expect(unknown.body).toEqual({ ok: false, reason: "unauthorized", message: expect.any(String) });
      expect(queries).toBe(1);
    } finally {
      pool.query = query;
    }
  });
});

describe("GET /me", () => {
  it("names the operator, or the token's organization and scopes", async () => {
    expect((await gw.admin("GET", "/me")).body).toEqual({ ok: true, principal: { kind: "operator" } });
    const { token, details } = await mint(["read"]);
    const me = await as(token, "GET", "/me");
    expect(me.status).toBe(200);
    expect(me.body.principal).toMatchObject({ kind: "token", org: { id: orgId, name: "Tokens Inc" }, scopes: ["read"] });
    expect(me.body.principal.token).toMatchObject({ id: details.id, name: details.name });
    expect((await gw.call("/admin/v1/me")).status).toBe(401);
    expect((await gw.call("/admin/v1/me", { headers: bearer("not-a-token") })).status).toBe(401);
  });
});

describe("without ADMIN_TOKEN", () => {
  it("answers admin_disabled to everyone but organization tokens, which work", async () => {
    const org = await insertOrg(noAdmin.ctx.db, {
      name: "Lone",
      plan: "free",
      fixTargetDays: 30,
      subscription: "active",
      nowMs: noAdmin.ctx.clock.now(),
    });
    const fresh = newOrgToken();
    await insertToken(noAdmin.ctx.db, {
      orgId: org.id,
      name: "ops",
      hash: sha256(fresh.token),
      prefix: fresh.prefix,
      scopes: ["read"],
      createdBy: "test",
      createdByMember: null,
      nowMs: noAdmin.ctx.clock.now(),
      expiresMs: null,
    });
    for (const headers of [{}, bearer(ADMIN_TOKEN), bearer("")]) {
      const res = await noAdmin.call("/admin/v1/me", { headers });
      expect(res.status).toBe(503);
      expect(res.body.reason).toBe("admin_disabled");
    }
    const me = await noAdmin.call("/admin/v1/me", { headers: bearer(fresh.token) });
    expect(me.status).toBe(200);
    expect(me.body.principal).toMatchObject({ kind: "token", org: { id: org.id } });
    expect((await noAdmin.call(`/admin/v1/orgs/${org.id}`, { headers: bearer(fresh.token) })).status).toBe(200);
    const typo = `${fresh.token.slice(0, -1)}${fresh.token.endsWith("x") ? "y" : "x"}`;
    expect((await noAdmin.call("/admin/v1/me", { headers: bearer(typo) })).status).toBe(401);
  });
});
