import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertInstallation } from "../../../shared/verify/db/keys.js";
import { writeLastUsed } from "../../../shared/verify/db/usage.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { checkPaging } from "../../helpers/paging.js";

/** The lists of operator-api.md section 5: arrays under the plural name, newest first, paged like activity.php. */

let gw: TestGateway;
let orgId: number;
let otherOrg: number;
let readToken: string;

async function ok(method: string, path: string, body?: unknown) {
  const res = await gw.admin(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Moves the clock a second so "newest first" has distinct times to order by. */
const tick = () => gw.admin("POST", "/clock", { advance_s: 1 });

beforeAll(async () => {
  gw = await startTestGateway("lists");
  orgId = (await ok("POST", "/orgs", { name: "Listed", plan: "enterprise" })).org.id;
  otherOrg = (await ok("POST", "/orgs", { name: "Other", plan: "enterprise" })).org.id;
  readToken = (await ok("POST", `/orgs/${orgId}/tokens`, { name: "reader", scopes: ["read"] })).token;
  for (let i = 1; i <= 3; i++) {
    await ok("POST", `/orgs/${orgId}/members`, { name: `M${i}`, email: `m${i}@listed.example`, role: i === 1 ? "owner" : "member" });
    await ok("POST", `/orgs/${orgId}/domains`, { domain: `d${i}.listed.example`, verified: i === 1 });
    await ok("PUT", `/orgs/${orgId}/content/c${i}`, { type: "number", value: i });
    await ok("PUT", `/orgs/${orgId}/secrets/s${i}`, { value: `secret-value-${i}` });
    await tick();
  }
  await ok("POST", `/orgs/${otherOrg}/members`, { name: "Not listed", email: "x@other.example" });
});
afterAll(async () => {
  await gw?.stop();
});

const get = (path: string, query: Record<string, string> = {}, token?: string) =>
  gw.call(`/admin/v1${path}`, { query, headers: { authorization: `Bearer ${token ?? "test-admin-token-0123456789"}` } });

describe("paging", () => {
  const LISTS: [string, string][] = [
    ["/orgs/ORG/members", "members"],
    ["/orgs/ORG/domains", "domains"],
    ["/orgs/ORG/content", "content"],
    ["/orgs/ORG/secrets", "secrets"],
    ["/orgs/ORG/keys", "keys"],
    ["/orgs/ORG/risks", "risks"],
    ["/orgs/ORG/tokens", "tokens"],
    ["/orgs", "orgs"],
  ];

  it.each(LISTS)("%s answers limit 1-500 (default 100), page from 1, total and has_more", async (template, field) => {
    await checkPaging(get, template.replace("ORG", String(orgId)), field);
  });
});

describe("the lists", () => {
  it("GET /orgs: every organization, newest first, the operator only", async () => {
    const res = await get("/orgs");
    expect(res.body.orgs.map((o: { id: number }) => o.id)).toEqual([otherOrg, orgId]);
    expect(res.body.orgs[1]).toEqual((await get(`/orgs/${orgId}`)).body.org);
    const refused = await get("/orgs", {}, readToken);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ ok: false, reason: "forbidden", message: expect.any(String) });
  });

  it("GET /orgs/:org/members: name, email and role, newest first, of that organization only", async () => {
    const res = await get(`/orgs/${orgId}/members`, {}, readToken);
    expect(res.body.members.map((m: { email: string; role: string; name: string }) => [m.name, m.email, m.role])).toEqual([
      ["M3", "m3@listed.example", "member"],
      ["M2", "m2@listed.example", "member"],
      ["M1", "m1@listed.example", "owner"],
    ]);
  });

  it("GET /orgs/:org/domains: with verified and the TXT record to publish", async () => {
    const res = await get(`/orgs/${orgId}/domains`, {}, readToken);
    expect(res.body.domains.map((d: { name: string }) => d.name)).toEqual(["d3.listed.example", "d2.listed.example", "d1.listed.example"]);
    const [d3, , d1] = res.body.domains;
    expect(d1.verified).toBe(true);
    expect(d3.verified).toBe(false);
    expect(d3.txt_record).toEqual({
      name: "_gateway-verification.d3.listed.example",
      value: `gateway-verification=${d3.verification_token}`,
    });
  });

  it("GET /orgs/:org/content: the items, most recently changed first", async () => {
    await tick();
    await ok("PUT", `/orgs/${orgId}/content/c1`, { type: "json", value: { a: 1 } });
    const res = await get(`/orgs/${orgId}/content`, {}, readToken);
    expect(res.body.content.map((c: { content_key: string }) => c.content_key)).toEqual(["c1", "c3", "c2"]);
    expect(res.body.content[0]).toMatchObject({ content_key: "c1", type: "json", value: { a: 1 } });
    expect(typeof res.body.content[0].updated_at).toBe("string");
  });

  it("GET /orgs/:org/secrets: names and times, never a value", async () => {
    const res = await get(`/orgs/${orgId}/secrets`, {}, readToken);
    expect(res.body.secrets.map((s: { name: string }) => s.name)).toEqual(["s3", "s2", "s1"]);
    for (const secret of res.body.secrets) expect(Object.keys(secret).sort()).toEqual(["name", "updated_at"]);
    expect(JSON.stringify(res.body)).not.toContain("secret-value");
  });

  it("GET /orgs/:org/risks: the acceptances with expired, on the service's clock", async () => {
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    await ok("POST", `/orgs/${orgId}/risks`, {
      domain: "d1.listed.example",
      finding_key: "email:spf",
      note: "later",
      expires_at: new Date((now + 600) * 1000).toISOString(),
    });
    await tick();
    await ok("POST", `/orgs/${orgId}/risks`, { domain: "d2.listed.example", finding_key: "headers:csp", note: "forever" });
    let res = await get(`/orgs/${orgId}/risks`, {}, readToken);
    expect(
      res.body.risks.map((r: { domain: string; finding_key: string; expired: boolean }) => [r.domain, r.finding_key, r.expired]),
    ).toEqual([
      ["d2.listed.example", "headers:csp", false],
      ["d1.listed.example", "email:spf", false],
    ]);
    expect(res.body.risks[1]).toMatchObject({ note: "later", acked_by: "operator" });
    await gw.admin("POST", "/clock", { advance_s: 601 });
    res = await get(`/orgs/${orgId}/risks`, {}, readToken);
    expect(res.body.risks.map((r: { expired: boolean }) => r.expired)).toEqual([false, true]);
    await ok("DELETE", `/orgs/${orgId}/risks/d2.listed.example/headers:csp`);
    res = await get(`/orgs/${orgId}/risks`, {}, readToken);
    expect(res.body.risks.map((r: { domain: string }) => r.domain)).toEqual(["d1.listed.example"]);
  });

  it("GET /orgs/:org/keys: each key's details (never the key) with last_used_at; filters status and kind", async () => {
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    const made: { key: string; details: { id: number } }[] = [];
    for (const body of [
      { name: "server-a", kind: "server" },
      { name: "client-a", kind: "client", domain: "d1.listed.example" },
      { name: "soon", kind: "server", expires_at: new Date((now + 60) * 1000).toISOString() },
      { name: "paused", kind: "server" },
      { name: "gone", kind: "server" },
    ]) {
      made.push(await ok("POST", `/orgs/${orgId}/keys`, body));
      await tick();
    }
    await ok("POST", `/keys/${made[3].details.id}/suspend`);
    await ok("POST", `/keys/${made[4].details.id}/revoke`);
    await gw.admin("POST", "/clock", { advance_s: 120 });
    const usedAt = gw.ctx.clock.now();
    await writeLastUsed(gw.ctx.db, [{ key: made[0].details.id, atMs: usedAt }]);

    const res = await get(`/orgs/${orgId}/keys`, {}, readToken);
    expect(res.body.keys.map((k: { name: string }) => k.name)).toEqual(["gone", "paused", "soon", "client-a", "server-a"]);
    for (const { key } of made) expect(JSON.stringify(res.body)).not.toContain(key);
    const serverA = res.body.keys[4];
    const { last_used_at: lastUsedAt, ...details } = serverA;
    expect(details).toEqual((await get(`/keys/${made[0].details.id}`)).body.details);
    expect(lastUsedAt).toBe(new Date(Math.floor(usedAt / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"));
    expect(res.body.keys[3].last_used_at).toBeNull();

    const names = async (query: Record<string, string>) =>
      (await get(`/orgs/${orgId}/keys`, query, readToken)).body.keys.map((k: { name: string }) => k.name);
    expect(await names({ status: "active" })).toEqual(["client-a", "server-a"]);
    expect(await names({ status: "expired" })).toEqual(["soon"]);
    expect(await names({ status: "suspended" })).toEqual(["paused"]);
    expect(await names({ status: "revoked" })).toEqual(["gone"]);
    expect(await names({ kind: "client" })).toEqual(["client-a"]);
    expect(await names({ kind: "server", status: "active" })).toEqual(["server-a"]);
    const counted = await get(`/orgs/${orgId}/keys`, { status: "active", limit: "1" }, readToken);
    expect(counted.body).toMatchObject({ total: 2, has_more: true });
    for (const [query, reason] of [
      [{ status: "paused" }, "bad_status"],
      [{ kind: "browser" }, "bad_kind"],
    ] as const) {
      const refused = await get(`/orgs/${orgId}/keys`, query);
      expect(refused.status).toBe(400);
      expect(refused.body.reason).toBe(reason);
    }
  });

  it("answers 404 for an organization that does not exist, and for another organization's list", async () => {
    for (const list of ["members", "domains", "content", "secrets", "keys", "risks", "tokens"]) {
      expect((await get(`/orgs/999999/${list}`)).status, list).toBe(404);
      const theirs = await get(`/orgs/${otherOrg}/${list}`, {}, readToken);
      expect(theirs.status, list).toBe(404);
      expect(theirs.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
    }
  });
});

describe("GET /orgs/:org/installations", () => {
  let org: number;
  let keyA: number;
  let keyB: number;
  let reader: string;
  let seededAt: number;
  const names = async (query: Record<string, string> = {}) =>
    (await get(`/orgs/${org}/installations`, query, reader)).body.installations.map(
      (i: { key_name: string; install: string; status: string }) => `${i.key_name}/${i.install}:${i.status}`,
    );

  beforeAll(async () => {
    // An organization of its own (made after the GET /orgs test, which lists every organization).
    org = (await ok("POST", "/orgs", { name: "Installed", plan: "enterprise" })).org.id;
    reader = (await ok("POST", `/orgs/${org}/tokens`, { name: "reader", scopes: ["read"] })).token;
    const key = async (owner: number, name: string) =>
      (await ok("POST", `/orgs/${owner}/keys`, { name, kind: "server" })).details.id as number;
    keyA = await key(org, "alpha");
    keyB = await key(org, "beta");
    const revoked = await key(org, "revoked");
    const theirs = await key(otherOrg, "theirs");
    seededAt = gw.ctx.clock.now();
    for (const [keyId, install, status, agoS] of [
      [keyA, "a-1", "approved", 50],
      [keyA, "a-2", "pending", 10],
      [keyB, "b-1", "pending", 30],
      [keyB, "b-2", "blocked", 20],
      [revoked, "r-1", "pending", 5],
      [theirs, "t-1", "pending", 1],
    ] as const) {
      await upsertInstallation(gw.ctx.db, { keyId, install, status, seenMs: seededAt - agoS * 1000 });
    }
    await ok("POST", `/keys/${revoked}/revoke`);
  });

  it("lists the installations of the organization's keys that are not revoked, most recently seen first, each with its key", async () => {
    const res = await get(`/orgs/${org}/installations`, {}, reader);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, total: 4, page: 1, limit: 100, has_more: false });
    expect(await names()).toEqual(["alpha/a-2:pending", "beta/b-2:blocked", "beta/b-1:pending", "alpha/a-1:approved"]);
    const seen = new Date(Math.floor((seededAt - 10_000) / 1000) * 1000).toISOString().replace(".000Z", "Z");
    expect(res.body.installations[0]).toEqual({
      key_id: keyA,
      key_name: "alpha",
      install: "a-2",
      status: "pending",
      first_seen_at: seen,
      last_seen_at: seen,
    });
    // A later sighting moves an installation to the top; its first sighting stays.
    await upsertInstallation(gw.ctx.db, { keyId: keyA, install: "a-1", status: "pending", seenMs: gw.ctx.clock.now() });
    const moved = (await get(`/orgs/${org}/installations`, { limit: "1" }, reader)).body.installations[0];
    expect(moved).toMatchObject({ install: "a-1", status: "approved" });
    expect(Date.parse(moved.last_seen_at) - Date.parse(moved.first_seen_at)).toBeGreaterThanOrEqual(49_000);
  });

  it("filters by status; anything else is refused bad_status", async () => {
    expect(await names({ status: "pending" })).toEqual(["alpha/a-2:pending", "beta/b-1:pending"]);
    expect(await names({ status: "approved" })).toEqual(["alpha/a-1:approved"]);
    expect(await names({ status: "blocked" })).toEqual(["beta/b-2:blocked"]);
    const counted = await get(`/orgs/${org}/installations`, { status: "pending", limit: "1", page: "2" }, reader);
    expect(counted.body).toMatchObject({ total: 2, page: 2, has_more: false });
    expect(counted.body.installations.map((i: { install: string }) => i.install)).toEqual(["b-1"]);
    for (const status of ["paused", "PENDING", "revoked"]) {
      const refused = await get(`/orgs/${org}/installations`, { status });
      expect(refused.status, status).toBe(400);
      expect(refused.body, status).toEqual({ ok: false, reason: "bad_status", detail: expect.any(String), message: expect.any(String) });
    }
  });

  it("pages like every list", async () => {
    await checkPaging(get, `/orgs/${org}/installations`, "installations");
  });

  it("a read-only token of the organization may read it; another organization's token and a missing organization get 404", async () => {
    const stranger = (await ok("POST", `/orgs/${otherOrg}/tokens`, { name: "stranger", scopes: ["read", "write"] })).token;
    const theirs = await get(`/orgs/${org}/installations`, {}, stranger);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
    expect((await get(`/orgs/${org}/installations`, { status: "nonsense" }, stranger)).body).toEqual(theirs.body);
    expect((await get(`/orgs/${otherOrg}/installations`, {}, reader)).body).toEqual(theirs.body);
    const missing = await get("/orgs/999999/installations");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(theirs.body);
    // The other organization's list holds its own installation only.
    expect((await get(`/orgs/${otherOrg}/installations`)).body.installations.map((i: { install: string }) => i.install)).toEqual(["t-1"]);
  });
});
