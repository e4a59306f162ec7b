import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../../shared/platform/crypto/hash.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("keys");
});
afterAll(async () => {
  await gw?.stop();
});

async function org(plan = "enterprise"): Promise<number> {
  return (await gw.admin("POST", "/orgs", { name: `Org ${plan}`, plan })).body.org.id;
}

async function createKey(orgId: number, body: Record<string, unknown>) {
  return gw.admin("POST", `/orgs/${orgId}/keys`, body);
}

/** Redis knows the key (verify can find it) when its hash index is present. */
async function indexed(fullKey: string): Promise<boolean> {
  return (await gw.ctx.redis.exists(gw.ctx.keys.keyIndex(sha256Hex(fullKey)))) === 1;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe("POST /orgs/:org/keys", () => {
  it("creates a client key: ak_live_ prefix, shown once, details with every contract field", async () => {
    const id = await org();
    const { status, body } = await createKey(id, { name: "Site", kind: "client", domain: "WWW.Example.com" });
    expect(status).toBe(201);
    expect(body.ok).toBe(true);
    expect(body.key).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
    const d = body.details;
    // interface.md 2.1, then operator-api.md: kind, status and every field of the key body.
    expect(d).toMatchObject({
      id: expect.any(Number),
      name: "Site",
      prefix: body.key.slice(0, 12),
      environment: "production",
      industry: "",
      scopes: [],
      domain: "www.example.com",
      is_trial: false,
      kind: "client",
      status: "active",
      ip_allow: [],
      ip_deny: [],
      ip_binding: false,
      countries_allow: [],
      countries_block: [],
      rate_per_minute: 600,
      botcheck: { enabled: false, hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true, difficulty: 18 },
      firewall: null,
      content_origin: null,
    });
    expect(d.prefix.startsWith("ak_live_")).toBe(true);
    // Operator forms (issue 12, 11e): ISO 8601 times, scopes as the list.
    expect(d.expires_at).toMatch(ISO_TIME);
    expect(d.hard_expires_at).toBeNull();
    expect(JSON.stringify(d)).not.toContain(body.key);
    expect(await indexed(body.key)).toBe(true);
  });

  it("creates a server key: sk_live_ prefix, domain optional, every field stored", async () => {
    const id = await org();
    const { status, body } = await createKey(id, {
      name: "Backend",
      kind: "server",
      environment: "staging",
      industry: "retail",
      scopes: ["content:read", "secrets"],
      ip_allow: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"],
      ip_deny: ["10.1.0.0/16"],
      ip_binding: true,
      countries_allow: ["DE", "FR", "DE"],
      countries_block: ["KP"],
      rate_per_minute: 30,
      is_trial: true,
      expires_at: "2099-01-02T03:04:05Z",
      botcheck: { enabled: true, hold_ms: 2000, allow_mobile: false, blocked_url: "https://example.com/blocked" },
      firewall: { rules: [{ path: "/admin", action: "deny" }] },
      content_origin: "https://example.com/members",
    });
    expect(status).toBe(201);
    expect(body.key).toMatch(/^sk_live_[A-Za-z0-9]{40}$/);
    expect(body.details).toMatchObject({
      kind: "server",
      domain: "",
      environment: "staging",
      industry: "retail",
      scopes: ["content:read", "secrets"],
      ip_allow: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"],
      ip_deny: ["10.1.0.0/16"],
      ip_binding: true,
      countries_allow: ["DE", "FR"],
      countries_block: ["KP"],
      rate_per_minute: 30,
      is_trial: true,
      hard_expires_at: "2099-01-02T03:04:05Z",
      botcheck: {
        enabled: true,
        hold_ms: 2000,
        allow_desktop: true,
        allow_tablet: true,
        allow_mobile: false,
        blocked_url: "https://example.com/blocked",
      },
      firewall: { rules: [{ path: "/admin", action: "deny" }] },
      content_origin: "https://example.com/members",
    });
    // The public expires_at is the effective end: the org's 30-day window comes first.
    expect(body.details.expires_at).toMatch(ISO_TIME);
    expect(Date.parse(body.details.expires_at)).toBeLessThan(Date.parse("2099-01-02T03:04:05Z"));
  });

  it.each([
    [{ name: "k", kind: "client" }, "missing_domain"],
    [{ name: "k", kind: "client", domain: null }, "missing_domain"],
    [{ name: "k", kind: "client", domain: "nope nope" }, "bad_domain"],
    [{ name: "k", kind: "server", ip_allow: ["10.0.0.0/33"] }, "bad_cidr"],
    [{ name: "k", kind: "server", ip_deny: ["999.1.1.1"] }, "bad_cidr"],
    [{ name: "k", kind: "server", ip_allow: ["example.com"] }, "bad_cidr"],
    [{ name: "k", kind: "server", countries_allow: ["XX"] }, "bad_country"],
    [{ name: "k", kind: "server", countries_block: ["de"] }, "bad_country"],
    [{ name: "k", kind: "server", countries_block: ["DEU"] }, "bad_country"],
    [{ name: "k", kind: "server", countries_block: ["UK"] }, "bad_country"],
    [{ name: "k", kind: "server", countries_allow: ["ZZ"] }, "bad_country"],
    [{ name: "k", kind: "server", countries_allow: ["EU"] }, "bad_country"],
    [{ name: "k", kind: "admin" }, "bad_kind"],
    [{ name: "k", kind: 1 }, "bad_kind"],
    [{ name: "k" }, "missing_kind"],
    [{ kind: "server" }, "missing_name"],
    [{ name: "", kind: "server" }, "bad_name"],
    [{ name: "k", kind: "server", environment: "prod" }, "bad_environment"],
    [{ name: "k", kind: "server", scopes: "all" }, "bad_scopes"],
    [{ name: "k", kind: "server", scopes: ["has space"] }, "bad_scopes"],
    [{ name: "k", kind: "server", ip_binding: "true" }, "bad_ip_binding"],
    [{ name: "k", kind: "server", rate_per_minute: 0 }, "bad_rate_per_minute"],
    [{ name: "k", kind: "server", rate_per_minute: 1.5 }, "bad_rate_per_minute"],
    [{ name: "k", kind: "server", is_trial: 1 }, "bad_is_trial"],
    [{ name: "k", kind: "server", expires_at: "tomorrow" }, "bad_expires_at"],
    [{ name: "k", kind: "server", expires_at: "2024-02-30T00:00:00Z" }, "bad_expires_at"],
    [{ name: "k", kind: "server", expires_at: "0000-01-01T00:00:00Z" }, "bad_expires_at"],
    [{ name: "k", kind: "server", botcheck: { enabled: "yes" } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { hold_ms: -1 } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { blocked_url: "javascript:alert(1)" } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { difficulty: 25 } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { difficulty: -1 } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { difficulty: 17.5 } }, "bad_botcheck"],
    [{ name: "k", kind: "server", botcheck: { difficulty: "18" } }, "bad_botcheck"],
    [{ name: "k", kind: "server", firewall: [] }, "bad_firewall"],
    [{ name: "k", kind: "server", content_origin: "ftp://example.com" }, "bad_content_origin"],
    [{ name: "k", kind: "server", secret: "x" }, "bad_secret"],
  ])("refuses %j with 400 %s", async (input, reason) => {
    const id = await org();
    const { status, body } = await createKey(id, input);
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, reason });
  });

  it("answers 404 for an unknown organization", async () => {
    expect((await createKey(999999, { name: "k", kind: "server" })).status).toBe(404);
    expect((await createKey(Number.NaN, { name: "k", kind: "server" })).status).toBe(404);
  });

  it("stops at the plan's number of keys with 409 key_limit_reached (free = 1); revoked keys do not count", async () => {
    const free = await org("free");
    const first = await createKey(free, { name: "one", kind: "server" });
    expect(first.status).toBe(201);
    const second = await createKey(free, { name: "two", kind: "server" });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ ok: false, reason: "key_limit_reached" });
    // A suspended key still counts.
    await gw.admin("POST", `/keys/${first.body.details.id}/suspend`);
    expect((await createKey(free, { name: "two", kind: "server" })).status).toBe(409);
    await gw.admin("POST", `/keys/${first.body.details.id}/revoke`);
    expect((await createKey(free, { name: "two", kind: "server" })).status).toBe(201);

    const starter = await org("starter");
    const made = await Promise.all([1, 2, 3, 4, 5].map((n) => createKey(starter, { name: `k${n}`, kind: "server" })));
    expect(made.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409]);
  });
});

describe("GET and PATCH /keys/:id", () => {
  it("gets the details, 404 for unknown or malformed ids", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "g", kind: "server" })).body;
    const got = await gw.admin("GET", `/keys/${created.details.id}`);
    expect(got.status).toBe(200);
    expect(got.body.details).toEqual(created.details);
    for (const bad of ["999999", "0", "-1", "1.5", "abc", "1e3", "99999999999999999999"]) {
      const r = await gw.admin("GET", `/keys/${bad}`);
      expect(r.status, bad).toBe(404);
      expect(r.body.reason, bad).toBe("not_found");
    }
  });

  it("patches any field but kind; a client key keeps a domain", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "p", kind: "client", domain: "p.example.com" })).body;
    const keyId = created.details.id;
    const patched = await gw.admin("PATCH", `/keys/${keyId}`, {
      name: "renamed",
      domain: "Other.Example.com",
      ip_deny: ["203.0.113.0/24"],
      botcheck: { enabled: true },
      expires_at: "2098-05-06 07:08:09",
    });
    expect(patched.status).toBe(200);
    expect(patched.body.details).toMatchObject({
      name: "renamed",
      domain: "other.example.com",
      ip_deny: ["203.0.113.0/24"],
      botcheck: { enabled: true, hold_ms: 1500 },
      hard_expires_at: "2098-05-06T07:08:09Z",
      kind: "client",
    });
    // Later patches keep what earlier ones set.
    const again = await gw.admin("PATCH", `/keys/${keyId}`, { botcheck: { hold_ms: 900, difficulty: 0 }, expires_at: null });
    expect(again.body.details.botcheck).toMatchObject({ enabled: true, hold_ms: 900, difficulty: 0 });
    expect(again.body.details.hard_expires_at).toBeNull();
    expect(again.body.details.name).toBe("renamed");

    for (const [input, reason] of [
      [{ kind: "server" }, "bad_kind"],
      [{ domain: null }, "bad_domain"],
      [{ domain: "" }, "bad_domain"],
      [{ ip_allow: ["300.0.0.0/8"] }, "bad_cidr"],
      [{ countries_allow: ["ZZ"] }, "bad_country"],
      [{ rate_per_minute: "10" }, "bad_rate_per_minute"],
    ] as const) {
      const r = await gw.admin("PATCH", `/keys/${keyId}`, input);
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.body.reason, JSON.stringify(input)).toBe(reason);
    }
    expect((await gw.admin("PATCH", "/keys/999999", { name: "x" })).status).toBe(404);
  });

  it("lets a server key drop its domain", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "s", kind: "server", domain: "s.example.com" })).body;
    const r = await gw.admin("PATCH", `/keys/${created.details.id}`, { domain: null });
    expect(r.status).toBe(200);
    expect(r.body.details.domain).toBe("");
  });
});

describe("suspend, resume, revoke, rotate", () => {
  it("suspends and resumes", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "s", kind: "server" })).body;
    const keyId = created.details.id;
    const suspended = await gw.admin("POST", `/keys/${keyId}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.details.status).toBe("suspended");
    expect((await gw.admin("GET", `/keys/${keyId}`)).body.details.status).toBe("suspended");
    const resumed = await gw.admin("POST", `/keys/${keyId}/resume`);
    expect(resumed.body.details.status).toBe("active");
    expect(await indexed(created.key)).toBe(true);
  });

  it("revokes for ever: later PATCH, resume, suspend, rotate and revoke answer 404", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "r", kind: "server" })).body;
    const keyId = created.details.id;
    const revoked = await gw.admin("POST", `/keys/${keyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.details.status).toBe("revoked");
    expect(await indexed(created.key)).toBe(false);
    for (const [method, path, body] of [
      ["PATCH", `/keys/${keyId}`, { name: "back" }],
      ["POST", `/keys/${keyId}/resume`, {}],
      ["POST", `/keys/${keyId}/suspend`, {}],
      ["POST", `/keys/${keyId}/rotate`, {}],
      ["POST", `/keys/${keyId}/revoke`, {}],
      ["POST", `/keys/${keyId}/installations/i1/approve`, {}],
    ] as const) {
      const r = await gw.admin(method, path, body);
      expect(r.status, path).toBe(404);
      expect(r.body.reason, path).toBe("not_found");
    }
    const after = await gw.admin("GET", `/keys/${keyId}`);
    expect(after.body.details).toMatchObject({ status: "revoked", name: "r" });
    expect(await indexed(created.key)).toBe(false);
  });

  it("rotates: a new key with the same settings and installations, the old one revoked", async () => {
    const id = await org();
    const created = (
      await createKey(id, { name: "rot", kind: "client", domain: "rot.example.com", scopes: ["a"], ip_allow: ["10.0.0.0/8"] })
    ).body;
    const oldId = created.details.id;
    await gw.admin("POST", `/keys/${oldId}/installations/site-a/approve`);
    const rotated = await gw.admin("POST", `/keys/${oldId}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.key).toMatch(/^ak_live_/);
    expect(rotated.body.key).not.toBe(created.key);
    const fresh = rotated.body.details;
    expect(fresh.id).not.toBe(oldId);
    expect(fresh).toMatchObject({
      status: "active",
      kind: "client",
      name: "rot",
      domain: "rot.example.com",
      scopes: ["a"],
      ip_allow: ["10.0.0.0/8"],
    });
    expect(fresh.prefix).toBe(rotated.body.key.slice(0, 12));
    expect((await gw.admin("GET", `/keys/${oldId}`)).body.details.status).toBe("revoked");
    expect(await indexed(created.key)).toBe(false);
    expect(await indexed(rotated.body.key)).toBe(true);
    const installs = await gw.admin("GET", `/keys/${fresh.id}/installations`);
    expect(installs.body.installations).toEqual([expect.objectContaining({ install: "site-a", status: "approved" })]);
    expect(await gw.ctx.redis.hget(gw.ctx.keys.installations(id, fresh.id), "site-a")).toBe("approved");
  });

  it("rotating on a full plan works: the old key is revoked in the same step", async () => {
    const free = await org("free");
    const created = (await createKey(free, { name: "only", kind: "server" })).body;
    const rotated = await gw.admin("POST", `/keys/${created.details.id}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.key).toMatch(/^sk_live_/);
  });

  it("answers 404 for an unknown key on every transition", async () => {
    for (const action of ["suspend", "resume", "revoke", "rotate"]) {
      expect((await gw.admin("POST", `/keys/999999/${action}`)).status).toBe(404);
    }
  });
});

describe("key status from the clock", () => {
  it("a hard expires_at in the past makes the key expired; clearing it makes it active again", async () => {
    const id = await org();
    const created = (await createKey(id, { name: "old", kind: "server", expires_at: "2001-01-01T00:00:00Z" })).body;
    expect(created.details.status).toBe("expired");
    expect(created.details.expires_at).toBe("2001-01-01T00:00:00Z");
    const cleared = await gw.admin("PATCH", `/keys/${created.details.id}`, { expires_at: null });
    expect(cleared.body.details.status).toBe("active");
  });
});
