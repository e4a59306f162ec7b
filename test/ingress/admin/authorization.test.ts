import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningActor, startActor } from "../../../actors/index.js";
import { defineActor } from "../../../actors/runtime/index.js";
import { ADMIN_ROUTES } from "../../../ingress/admin/routes.js";
import type { AdminRoute } from "../../../ingress/admin/common.js";
import type { Role } from "../../../shared/accounts/principal.js";
import { LIFETIMES } from "../../../shared/accounts/policy.js";
import { csrfTokenOf, newToken, tokenHash } from "../../../shared/accounts/secrets.js";
import { insertSession } from "../../../shared/accounts/db/member-sessions.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import { SIEM_TEST_STREAM, siemTestSchema, type SiemTestRequest } from "../../../shared/events/siem-stream.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/**
 * The whole admin route table, walked (operator-api.md section 5): for every route, a
 * principal of organization B gets 404 on organization A's resources exactly like a
 * missing one, a read-only token gets 403 `insufficient_scope` on every write, write
 * tokens never mint tokens or members, and each member role gets exactly what the role
 * table says. The expectations below are written from the contract's words, not read from
 * the route table's declarations, so a wrong declaration fails here.
 *
 * Members are signed in with real dashboard sessions (a session row and its cookie, with
 * the Origin and CSRF headers a state change needs), made directly in the database.
 */

let gw: TestGateway;
let responder: RunningActor;
let orgA: number;
let orgB: number;
let serial = 0;
const tokens: Record<"aRead" | "aWrite" | "bWrite", string> = { aRead: "", aWrite: "", bWrite: "" };
const members: Record<Role | "bOwner", number> = { member: 0, admin: 0, owner: 0, bOwner: 0 };

async function operator(method: string, path: string, body?: unknown) {
  const res = await gw.admin(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

beforeAll(async () => {
  gw = await startTestGateway("authz");
  // Stands in for the SIEM pusher's "send test event" consumer, so that route answers at once.
  responder = await startActor(
    gw.ctx,
    defineActor<SiemTestRequest, Pool>({
      name: "siem-test",
      streams: SIEM_TEST_STREAM,
      schema: siemTestSchema,
      concurrency: 4,
      maxAttempts: 1,
      startId: "$",
      blockMs: 200,
      handler: async (_request, { reply }) => {
        await reply?.({ ok: true, event_id: 0 });
      },
    }),
  );
  orgA = (await operator("POST", "/orgs", { name: "Org A", plan: "enterprise" })).org.id;
  orgB = (await operator("POST", "/orgs", { name: "Org B", plan: "enterprise" })).org.id;
  tokens.aRead = (await operator("POST", `/orgs/${orgA}/tokens`, { name: "a-read", scopes: ["read"] })).token;
  tokens.aWrite = (await operator("POST", `/orgs/${orgA}/tokens`, { name: "a-write", scopes: ["read", "write"] })).token;
  tokens.bWrite = (await operator("POST", `/orgs/${orgB}/tokens`, { name: "b-write", scopes: ["read", "write"] })).token;
  for (const role of ["member", "admin", "owner"] as const) {
    members[role] = (await operator("POST", `/orgs/${orgA}/members`, { name: `A ${role}`, email: `${role}@a.example`, role })).member.id;
  }
  members.bOwner = (
    await operator("POST", `/orgs/${orgB}/members`, { name: "B owner", email: "owner@b.example", role: "owner" })
  ).member.id;
  for (const id of Object.values(members)) await signIn(id);
});

afterAll(async () => {
  await responder?.stop();
  await gw?.stop();
});

type Principal =
  | { name: string; kind: "operator" }
  | { name: string; kind: "token"; token: string; org: "A" | "B"; write: boolean }
  | { name: string; kind: "member"; id: () => number; org: "A" | "B"; role: Role };

const PRINCIPALS: Principal[] = [
  { name: "operator", kind: "operator" },
  { name: "B's write token", kind: "token", token: "bWrite", org: "B", write: true },
  { name: "B's owner", kind: "member", id: () => members.bOwner, org: "B", role: "owner" },
  { name: "A's read token", kind: "token", token: "aRead", org: "A", write: false },
  { name: "A's write token", kind: "token", token: "aWrite", org: "A", write: true },
  { name: "A's member", kind: "member", id: () => members.member, org: "A", role: "member" },
  { name: "A's admin", kind: "member", id: () => members.admin, org: "A", role: "admin" },
  { name: "A's owner", kind: "member", id: () => members.owner, org: "A", role: "owner" },
];

const sessions = new Map<number, Record<string, string>>();

/** A live dashboard session of the member: its cookie, and the Origin and CSRF token a change needs. */
async function signIn(memberId: number): Promise<void> {
  const token = newToken();
  const hash = tokenHash(token);
  await insertSession(gw.ctx.db, {
    memberId,
    tokenHash: hash,
    method: "link",
    passkeyId: null,
    userAgent: "authorization test",
    nowMs: gw.ctx.clock.now(),
    absoluteMs: LIFETIMES.sessionAbsoluteMs,
    idleMs: LIFETIMES.sessionIdleMs,
  });
  sessions.set(memberId, {
    cookie: `gw_session=${token}`,
    origin: new URL(gw.url).origin,
    "x-csrf-token": csrfTokenOf(gw.ingress.deps.masterSecret, hash),
  });
}

function memberHeaders(memberId: number): Record<string, string> {
  const headers = sessions.get(memberId);
  if (!headers) throw new Error(`member ${memberId} has no session`);
  return headers;
}

function headersOf(p: Principal): Record<string, string> {
  if (p.kind === "operator") return { authorization: "Bearer test-admin-token-0123456789" };
  if (p.kind === "token") return { authorization: `Bearer ${tokens[p.token as keyof typeof tokens]}` };
  return memberHeaders(p.id());
}

// The contract's words, as rules over a route's method and path.
const isWrite = (r: AdminRoute) => r.method !== "GET";
const operatorOnly = (r: AdminRoute) => r.path === "/orgs" || r.path.startsWith("/status/") || r.path === "/clock";
const forEveryone = (r: AdminRoute) => r.path === "/me";
/**
 * Members and tokens are "write"; organization settings, members and tokens are the owner's.
 * Tokens never create tokens or members, nor change or remove a member: a write token that
 * could make an owner would mint through them (docs/accounts.md).
 */
const mints = (r: AdminRoute) => (r.method === "POST" && /\/(members|tokens)$/.test(r.path)) || r.path === "/orgs/:org/members/:id";
function roleNeeded(r: AdminRoute): Role {
  if (!isWrite(r)) return "member";
  if (r.path === "/orgs/:org" || /^\/orgs\/:org\/(members|tokens)\b/.test(r.path)) return "owner";
  if (r.path.includes("/assignments/")) return "member";
  return "admin";
}
const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

type Outcome = "allowed" | "not_found" | "forbidden" | "insufficient_scope";

function expected(r: AdminRoute, p: Principal): Outcome {
  if (p.kind === "operator" || forEveryone(r)) return "allowed";
  if (p.kind === "token" && !p.write && isWrite(r)) return "insufficient_scope";
  if (operatorOnly(r)) return "forbidden";
  if (p.org === "B") return "not_found";
  if (p.kind === "token") return mints(r) ? "forbidden" : "allowed";
  return RANK[p.role] >= RANK[roleNeeded(r)] ? "allowed" : "forbidden";
}

/**
 * A concrete path for the route, every resource it names made fresh in organization A by
 * the operator (so a 404 can only come from the authorization check, and one route's
 * change never disturbs another's resource).
 */
async function fill(r: AdminRoute): Promise<string> {
  const n = ++serial;
  // The destinations and webhooks made for earlier routes go: A stays under its limits (shared/accounts/limits.ts).
  await gw.ctx.db.query("DELETE FROM siem_destinations WHERE org_id = $1 AND url LIKE 'https://siem%.a.example/ingest'", [orgA]);
  await gw.ctx.db.query("DELETE FROM webhooks WHERE org_id = $1 AND url LIKE 'https://hooks.a.example/%'", [orgA]);
  const domain = `d${n}.a.example`;
  const values: Record<string, string> = { org: String(orgA), domain, finding_key: "email:spf", service: "website", install: `site-${n}` };
  if (r.path.includes(":domain")) await operator("POST", `/orgs/${orgA}/domains`, { domain, verified: true });
  if (r.path.includes("/risks/:domain")) await operator("POST", `/orgs/${orgA}/risks`, { domain, finding_key: "email:spf", note: "n" });
  if (r.path.includes("/assignments/:domain")) {
    await gw.ctx.db.query(
      "INSERT INTO assignments (org_id, domain, finding_key, finding, status, found_at, updated_at) VALUES ($1, $2, 'email:spf', 'SPF record', 'open', now(), now())",
      [orgA, domain],
    );
  }
  if (r.path.includes(":content_key")) {
    values.content_key = `c${n}`;
    await operator("PUT", `/orgs/${orgA}/content/c${n}`, { type: "text", value: "x" });
  }
  if (r.path.includes(":name")) {
    values.name = `s${n}`;
    await operator("PUT", `/orgs/${orgA}/secrets/s${n}`, { value: "secret" });
  }
  if (r.path.includes(":id")) {
    const before = r.path.split("/:id")[0].split("/").pop();
    if (before === "keys") {
      values.id = String((await operator("POST", `/orgs/${orgA}/keys`, { name: `k${n}`, kind: "server" })).details.id);
    } else if (before === "siem") {
      values.id = String(
        (await operator("POST", `/orgs/${orgA}/siem`, { kind: "http", url: `https://siem${n}.a.example/ingest` })).destination.id,
      );
    } else if (before === "webhooks") {
      values.id = String(
        (await operator("POST", `/orgs/${orgA}/webhooks`, { url: `https://hooks.a.example/${n}`, secret: "0123456789abcdef" })).webhook.id,
      );
    } else if (before === "members") {
      // A fresh member each time (a removal takes it away), never one of the principals.
      values.id = String(
        (await operator("POST", `/orgs/${orgA}/members`, { name: `Member ${n}`, email: `m${n}@a.example`, role: "member" })).member.id,
      );
    } else if (before === "tokens") {
      values.id = String((await operator("POST", `/orgs/${orgA}/tokens`, { name: `t${n}`, scopes: ["read"] })).details.id);
    } else if (before === "incidents") {
      values.id = String((await operator("POST", "/status/incidents", { title: `i${n}`, body: "b" })).incident.id);
    } else if (before === "maintenance") {
      const start = new Date(gw.ctx.clock.now() + 86400_000 * (n + 1)).toISOString();
      const end = new Date(gw.ctx.clock.now() + 86400_000 * (n + 1) + 3600_000).toISOString();
      values.id = String(
        (await operator("POST", "/status/maintenance", { title: `m${n}`, starts_at: start, ends_at: end })).maintenance.id,
      );
    } else {
      throw new Error(`no fixture for :id in ${r.path}: add one`);
    }
  }
  return r.path.replace(/:([a-z_]+)/g, (_, name: string) => {
    if (values[name] === undefined) throw new Error(`no fixture for :${name} in ${r.path}: add one`);
    return encodeURIComponent(values[name]);
  });
}

async function activityCount(): Promise<number> {
  const { rows } = await gw.ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM activity WHERE org_id = $1", [orgA]);
  return rows[0].n;
}

const REFUSALS = new Set(["unauthorized", "admin_disabled", "forbidden", "insufficient_scope", "not_found"]);

describe("the admin route table", () => {
  it("declares every route once, and the contract's routes are in it", () => {
    const seen = new Set(ADMIN_ROUTES.map((r) => `${r.method} ${r.path}`));
    expect(seen.size).toBe(ADMIN_ROUTES.length);
    for (const call of [
      "POST /orgs",
      "GET /orgs",
      "GET /orgs/:org",
      "PATCH /orgs/:org",
      "POST /orgs/:org/members",
      "GET /orgs/:org/members",
      "POST /orgs/:org/tokens",
      "GET /orgs/:org/tokens",
      "DELETE /orgs/:org/tokens/:id",
      "PATCH /orgs/:org/members/:id",
      "DELETE /orgs/:org/members/:id",
      "GET /me",
      "GET /orgs/:org/keys",
      "GET /orgs/:org/domains",
      "GET /orgs/:org/risks",
      "GET /orgs/:org/content",
      "GET /orgs/:org/secrets",
      "GET /orgs/:org/siem/:id",
    ]) {
      expect(seen.has(call), call).toBe(true);
    }
  });

  it("will not take a route without its reach: the compiler refuses it", () => {
    // @ts-expect-error `reach` is required: a route cannot forget who may call it.
    const undeclared: AdminRoute = { method: "GET", path: "/nowhere", handler: () => ({ status: 200, body: {} }) };
    expect(undeclared.reach).toBeUndefined();
  });

  for (const p of PRINCIPALS) {
    it(`gives ${p.name} exactly what the contract says on every route`, async () => {
      const outcomes: string[] = [];
      const wrong: string[] = [];
      for (const r of ADMIN_ROUTES) {
        const path = await fill(r);
        const before = await activityCount();
        const res = await gw.call(`/admin/v1${path}`, {
          method: r.method,
          headers: headersOf(p),
          body: r.method === "GET" ? undefined : {},
        });
        const want = expected(r, p);
        const reason: string = res.body?.reason ?? "";
        const got: Outcome | "other" =
          res.status < 500 && !REFUSALS.has(reason) ? "allowed" : REFUSALS.has(reason) ? (reason as Outcome) : "other";
        outcomes.push(`${r.method} ${r.path} -> ${got}`);
        if (got !== want) wrong.push(`${r.method} ${r.path}: expected ${want}, got ${res.status} ${JSON.stringify(res.body)}`);
        if (want !== "allowed") {
          // A refusal is the bare reason (a missing resource's 404 looks the same), and changes nothing.
          expect(res.body, `${r.method} ${path}`).toEqual({ ok: false, reason: want, message: expect.any(String) });
          expect(res.status).toBe(want === "not_found" ? 404 : 403);
          expect(await activityCount(), `${r.method} ${path} wrote activity`).toBe(before);
        }
      }
      expect(wrong, outcomes.join("\n")).toEqual([]);
    });
  }

  it("answers another organization's resource exactly like a missing one", async () => {
    const key = (await operator("POST", `/orgs/${orgA}/keys`, { name: "k-cmp", kind: "server" })).details.id;
    const as = (path: string) => gw.call(`/admin/v1${path}`, { headers: { authorization: `Bearer ${tokens.bWrite}` } });
    const theirs = await as(`/keys/${key}`);
    const missing = await as("/keys/999999999");
    const malformed = await as("/keys/abc");
    expect(theirs.status).toBe(404);
    expect([missing.status, malformed.status]).toEqual([404, 404]);
    expect(theirs.body).toEqual(missing.body);
    expect(theirs.body).toEqual(malformed.body);
    expect(JSON.stringify([...theirs.headers].filter(([h]) => h !== "date"))).toBe(
      JSON.stringify([...missing.headers].filter(([h]) => h !== "date")),
    );
    // The operator's own 404 for a missing key is the same body.
    expect((await gw.admin("GET", "/keys/999999999")).body).toEqual(theirs.body);
    // A resource of A named under B's own organization is not B's either.
    const destination = (await operator("POST", `/orgs/${orgA}/siem`, { kind: "http", url: "https://siem-x.a.example/ingest" })).destination
      .id;
    const crossed = await as(`/orgs/${orgB}/siem/${destination}`);
    expect(crossed.status).toBe(404);
    expect(crossed.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
  });

  it("leaves the plan and the subscription to the operator: an owner or a write token changes the rest of the settings", async () => {
    const org = async () => (await operator("GET", `/orgs/${orgA}`)).org;
    const before = await org();
    const patch = (headers: Record<string, string>, body: unknown) => gw.call(`/admin/v1/orgs/${orgA}`, { method: "PATCH", headers, body });
    for (const headers of [memberHeaders(members.owner), { authorization: `Bearer ${tokens.aWrite}` }]) {
      for (const body of [{ plan: "enterprise" }, { subscription: "active" }, { name: "Org A", plan: "free" }]) {
        const activity = await activityCount();
        const res = await patch(headers, body);
        expect(res.status, JSON.stringify(body)).toBe(403);
        expect(res.body).toEqual({ ok: false, reason: "forbidden", message: expect.any(String) });
        expect(await activityCount()).toBe(activity);
      }
    }
    // A lapsed organization's owner cannot bring its keys back by marking itself active.
    await operator("PATCH", `/orgs/${orgA}`, { subscription: "lapsed" });
    expect((await patch(memberHeaders(members.owner), { subscription: "active" })).status).toBe(403);
    expect((await org()).subscription).toBe("lapsed");
    await operator("PATCH", `/orgs/${orgA}`, { subscription: before.subscription });
    // The rest of the settings are the owner's and the write token's.
    const renamed = await patch(memberHeaders(members.owner), { name: "Org A renamed", fix_target_days: 14 });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.org).toMatchObject({ name: "Org A renamed", fix_target_days: 14, plan: before.plan });
    expect((await patch({ authorization: `Bearer ${tokens.aWrite}` }, { name: "Org A" })).status).toBe(200);
    await operator("PATCH", `/orgs/${orgA}`, { fix_target_days: before.fix_target_days });
    expect(await org()).toMatchObject({ name: "Org A", plan: before.plan, subscription: before.subscription });
  });

  it("names the principal in the activity record: the token's name, the member's name and e-mail, never an address", async () => {
    const content = async (headers: Record<string, string>, key: string) => {
      const res = await gw.call(`/admin/v1/orgs/${orgA}/content/${key}`, { method: "PUT", headers, body: { type: "text", value: "v" } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await content({ authorization: `Bearer ${tokens.aWrite}` }, "who-token");
    await content(memberHeaders(members.admin), "who-member");
    await content({ authorization: "Bearer test-admin-token-0123456789" }, "who-operator");
    const { rows } = await gw.ctx.db.query<{ who: string; detail: { content_key: string } }>(
      "SELECT who, detail FROM activity WHERE org_id = $1 AND action_code = 'content.updated' AND detail->>'content_key' LIKE 'who-%' ORDER BY id",
      [orgA],
    );
    expect(rows.map((r) => [r.detail.content_key, r.who])).toEqual([
      ["who-token", "token:a-write"],
      ["who-member", "A admin <admin@a.example>"],
      ["who-operator", "operator"],
    ]);
    for (const row of rows) expect(row.who).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
  });
});
