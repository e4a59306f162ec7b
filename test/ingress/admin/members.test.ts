import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";
import { advance, joined, type MemberClient, signInByLink, siteOf } from "./auth/fixtures.js";

/**
 * Taking access away (docs/accounts.md "Members"): PATCH /orgs/:org/members/:id changes a
 * role, DELETE removes a member; and POST /orgs/:org/members refuses an address the mailer
 * would not send to. Over HTTP against the real gateway, with members signed
 * in through real sessions (an accepted invitation, then an e-mailed link): who may, what
 * holds from the member's next request, the last owner kept, the activity record, and what
 * happens to the member's assignments and the default owner.
 */

let gw: TestGateway;
let smtp: SmtpSink;
let site: string;
let orgId: number;
let otherOrgId: number;

beforeAll(async () => {
  smtp = await startSmtpSink();
  gw = await startTestGateway("admin-members", { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  site = siteOf(gw);
  orgId = (await gw.admin("POST", "/orgs", { name: "Members Org", plan: "enterprise" })).body.org.id;
  otherOrgId = (await gw.admin("POST", "/orgs", { name: "Other Org", plan: "enterprise" })).body.org.id;
});

afterAll(async () => {
  await gw?.stop();
  await smtp?.stop();
});

// Fresh sign-in budgets for every test (the fixtures spend ceremony calls).
beforeEach(async () => {
  await advance(gw, 3600);
});

type Session = MemberClient & { id: number; name: string; email: string };

/** A member of `org` with `role`, invitation accepted and signed in with an e-mailed link. */
async function member(role: string, org = orgId): Promise<Session> {
  const m = await joined(gw, smtp, org, role);
  const client = await signInByLink(gw, smtp, m.email);
  return Object.assign(client, { id: m.id, name: m.name, email: m.email });
}

/** An admin API call with the member's session: its cookie, the site's Origin and the CSRF token. */
function as(session: Session, method: string, path: string, body?: unknown) {
  return gw.call(`/admin/v1${path}`, {
    method,
    body: method === "GET" ? undefined : (body ?? {}),
    headers: { cookie: session.cookie, origin: site, "x-csrf-token": session.csrf },
  });
}

function withToken(token: string, method: string, path: string, body?: unknown) {
  return gw.call(`/admin/v1${path}`, {
    method,
    body: method === "GET" ? undefined : (body ?? {}),
    headers: { authorization: `Bearer ${token}` },
  });
}

async function activity(code: string, org = orgId) {
  const { rows } = await gw.ctx.db.query<{ grp: string; who: string; action: string; detail: Record<string, unknown> }>(
    "SELECT grp, who, action, detail FROM activity WHERE org_id = $1 AND action_code = $2 ORDER BY id",
    [org, code],
  );
  return rows;
}

async function owners(org = orgId): Promise<number> {
  const { rows } = await gw.ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM members WHERE org_id = $1 AND role = 'owner'", [
    org,
  ]);
  return rows[0].n;
}

/** Makes the organization's owners exactly `keep`: every other owner is made a member, by the operator, through the API. */
async function onlyOwners(keep: readonly number[]): Promise<void> {
  const { rows } = await gw.ctx.db.query<{ id: number }>("SELECT id FROM members WHERE org_id = $1 AND role = 'owner'", [orgId]);
  for (const { id } of rows) {
    if (keep.includes(id)) continue;
    const res = await gw.admin("PATCH", `/orgs/${orgId}/members/${id}`, { role: "member" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

const conflict = { ok: false, reason: "conflict", message: expect.any(String), detail: expect.stringContaining("last owner") };

describe("POST /orgs/:org/members", () => {
  // What the mailer would refuse (shared/platform/mail.ts) is refused here, before a member
  // exists: an address a parser reads as a display name, a list or a header.
  const NOT_PLAIN = [
    "a<b>@c.example",
    '"x" <evil@attacker.example>',
    "a@b.example, c@d.example",
    "a@b.example\r\nBcc: c@d.example",
    "ä@example.com",
  ];

  it("an address that is not a plain local@domain is 400 bad_email: no member, no invitation, nothing sent", async () => {
    const before = smtp.mails.length;
    for (const email of NOT_PLAIN) {
      const refused = await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Mallory", email, role: "owner" });
      expect(refused.status, email).toBe(400);
      expect(refused.body, email).toMatchObject({ ok: false, reason: "bad_email" });
    }
    const { rows } = await gw.ctx.db.query("SELECT email FROM members WHERE org_id = $1 AND name = 'Mallory'", [orgId]);
    expect(rows).toEqual([]);
    expect(smtp.mails.length).toBe(before);
  });

  it("a sign-in link asked for such an address is 400 bad_email too", async () => {
    for (const email of NOT_PLAIN) {
      const refused = await gw.call("/admin/v1/auth/signin/link", { method: "POST", body: { email }, headers: { origin: site } });
      expect(refused.status, email).toBe(400);
      expect(refused.body, email).toMatchObject({ ok: false, reason: "bad_email" });
    }
  });
});

describe("PATCH /orgs/:org/members/:id", () => {
  it("an owner changes a role; it holds from the member's next request, and the member's session and passkeys stay", async () => {
    const owner = await member("owner");
    const grace = await member("member");
    // A member may not create a key; an admin may.
    const key = { name: "by-grace", kind: "server" };
    expect((await as(grace, "POST", `/orgs/${orgId}/keys`, key)).body.reason).toBe("forbidden");
    expect((await as(grace, "GET", "/me")).body.principal.role).toBe("member");

    const changed = await as(owner, "PATCH", `/orgs/${orgId}/members/${grace.id}`, { role: "admin" });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toEqual({
      ok: true,
      member: { id: grace.id, name: grace.name, email: grace.email, role: "admin", created_at: expect.any(String) },
    });

    // The same session, its next request: the new role, nothing revoked.
    expect((await as(grace, "GET", "/me")).body.principal.role).toBe("admin");
    expect((await as(grace, "POST", `/orgs/${orgId}/keys`, key)).status).toBe(201);
    expect((await grace.call("GET", "/session")).body.member.role).toBe("admin");
    expect((await grace.call("GET", "/passkeys")).body.passkeys).toHaveLength(1);
    const listed = (await gw.admin("GET", `/orgs/${orgId}/members`)).body.members;
    expect(listed.find((m: { id: number }) => m.id === grace.id).role).toBe("admin");

    // And back down: her next admin call is refused.
    expect((await as(owner, "PATCH", `/orgs/${orgId}/members/${grace.id}`, { role: "member" })).status).toBe(200);
    expect((await as(grace, "POST", `/orgs/${orgId}/keys`, { ...key, name: "again" })).body.reason).toBe("forbidden");

    const rows = (await activity("member.role_changed")).filter((r) => r.detail.email === grace.email);
    expect(rows).toEqual([
      {
        grp: "members",
        who: `${owner.name} <${owner.email}>`,
        action: `Role of member ${grace.email} changed from member to admin`,
        detail: { email: grace.email, role: "admin", previous_role: "member" },
      },
      {
        grp: "members",
        who: `${owner.name} <${owner.email}>`,
        action: `Role of member ${grace.email} changed from admin to member`,
        detail: { email: grace.email, role: "member", previous_role: "admin" },
      },
    ]);
  });

  it("the same role again changes and records nothing; a role outside the three, or none, is a field error", async () => {
    const owner = await member("owner");
    const m = await member("member");
    const before = (await activity("member.role_changed")).length;
    const same = await as(owner, "PATCH", `/orgs/${orgId}/members/${m.id}`, { role: "member" });
    expect(same.status).toBe(200);
    expect(same.body.member.role).toBe("member");
    expect(await activity("member.role_changed")).toHaveLength(before);
    for (const [body, reason] of [
      [{}, "missing_role"],
      [{ role: "root" }, "bad_role"],
      [{ role: "admin", name: "x" }, "bad_name"],
    ] as const) {
      const res = await as(owner, "PATCH", `/orgs/${orgId}/members/${m.id}`, body);
      expect({ status: res.status, reason: res.body.reason }, JSON.stringify(body)).toEqual({ status: 400, reason });
    }
  });
});

describe("DELETE /orgs/:org/members/:id", () => {
  it("removes the member: its session is refused on its next request, its passkeys, links and sessions are gone, the activity records it", async () => {
    const owner = await member("owner");
    const leaving = await member("admin");
    expect((await as(leaving, "GET", `/orgs/${orgId}`)).status).toBe(200);

    const removed = await as(owner, "DELETE", `/orgs/${orgId}/members/${leaving.id}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toEqual({
      ok: true,
      removed: { id: leaving.id, name: leaving.name, email: leaving.email, role: "admin", created_at: expect.any(String) },
      assignments_unassigned: 0,
      default_owner_cleared: false,
      tokens_revoked: 0,
    });

    // Its very next request: the session is over, whatever it asks.
    for (const [method, path] of [
      ["GET", `/orgs/${orgId}`],
      ["GET", "/me"],
      ["POST", `/orgs/${orgId}/keys`],
    ]) {
      const refused = await as(leaving, method, path, { name: "k", kind: "server" });
      expect({ status: refused.status, body: refused.body }, `${method} ${path}`).toEqual({
        status: 401,
        body: { ok: false, reason: "session_expired", message: expect.any(String) },
      });
    }
    expect((await leaving.call("GET", "/session")).body.reason).toBe("session_expired");
    for (const table of ["member_sessions", "member_passkeys", "member_links"]) {
      const { rows } = await gw.ctx.db.query(`SELECT count(*)::int AS n FROM ${table} WHERE member_id = $1`, [leaving.id]);
      expect(rows[0].n, table).toBe(0);
    }
    expect((await gw.admin("GET", `/orgs/${orgId}/members`)).body.members.map((m: { id: number }) => m.id)).not.toContain(leaving.id);
    // Gone: a second removal finds nothing.
    expect((await as(owner, "DELETE", `/orgs/${orgId}/members/${leaving.id}`)).body.reason).toBe("not_found");

    const rows = (await activity("member.removed")).filter((r) => r.detail.email === leaving.email);
    expect(rows).toEqual([
      {
        grp: "members",
        who: `${owner.name} <${owner.email}>`,
        action: `Member ${leaving.email} (admin) removed`,
        detail: { email: leaving.email, role: "admin", assignments_unassigned: 0, default_owner_cleared: false, tokens_revoked: 0 },
      },
    ]);
    // Its own past entries keep naming it: the record is history.
    expect(
      (await gw.ctx.db.query("SELECT count(*)::int AS n FROM activity WHERE who = $1", [`${leaving.name} <${leaving.email}>`])).rows[0].n,
    ).toBeGreaterThan(0);
  });

  it("revokes the tokens the member made, and only those: leaving leaves no working credential behind", async () => {
    const staying = await member("owner");
    const leaving = await member("owner");
    const made = async (session: Session, name: string) => {
      const res = await as(session, "POST", `/orgs/${orgId}/tokens`, { name, scopes: ["read", "write"] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { token: res.body.token as string, id: res.body.details.id as number };
    };
    const mine = [await made(leaving, "deploy"), await made(leaving, "ci")];
    const theirs = await made(staying, "billing");
    const operators = await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: "ops", scopes: ["read"] });
    for (const t of [...mine, theirs]) expect((await withToken(t.token, "GET", `/orgs/${orgId}`)).status).toBe(200);

    const removed = await as(staying, "DELETE", `/orgs/${orgId}/members/${leaving.id}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.tokens_revoked).toBe(2);
    // Its tokens are refused from their next call; the other owner's and the operator's work on.
    for (const t of mine) {
      const refused = await withToken(t.token, "GET", `/orgs/${orgId}`);
      expect(refused.status).toBe(401);
    }
    expect((await withToken(theirs.token, "GET", `/orgs/${orgId}`)).status).toBe(200);
    expect((await withToken(operators.body.token, "GET", `/orgs/${orgId}`)).status).toBe(200);
    const live = (await gw.admin("GET", `/orgs/${orgId}/tokens?limit=500`)).body.tokens.map((t: { id: number }) => t.id);
    expect(live).toContain(theirs.id);
    for (const t of mine) expect(live).not.toContain(t.id);
    const revoked = (await activity("token.revoked")).filter((r) => mine.some((t) => r.detail.token_id === t.id));
    expect(revoked.map((r) => [r.grp, r.who, r.detail.reason])).toEqual([
      ["team_security", `${staying.name} <${staying.email}>`, "member_removed"],
      ["team_security", `${staying.name} <${staying.email}>`, "member_removed"],
    ]);
  });

  it("the member's assignments stay, unowned, with a history entry; a default owner naming it is cleared and recorded", async () => {
    const owner = await member("owner");
    const dev = await member("member");
    const insert = async (domain: string, status: string) =>
      (
        await gw.ctx.db.query<{ id: number }>(
          `INSERT INTO assignments (org_id, domain, finding_key, finding, status, owner_id, found_at, updated_at)
           VALUES ($1, $2, 'email:spf', 'SPF record', $3, $4, now(), now()) RETURNING id`,
          [orgId, domain, status, dev.id],
        )
      ).rows[0].id;
    const open = await insert("a.members.example", "open");
    const done = await insert("b.members.example", "done");
    expect((await as(owner, "PATCH", `/orgs/${orgId}`, { default_owner: dev.email })).body.org.default_owner).toEqual({
      name: dev.name,
      email: dev.email,
    });

    const removed = await as(owner, "DELETE", `/orgs/${orgId}/members/${dev.id}`);
    expect(removed.body).toMatchObject({ ok: true, assignments_unassigned: 2, default_owner_cleared: true });

    const { rows: assignments } = await gw.ctx.db.query("SELECT id, status, owner_id FROM assignments WHERE id = ANY($1) ORDER BY id", [
      [open, done],
    ]);
    expect(assignments).toEqual([
      { id: open, status: "open", owner_id: null },
      { id: done, status: "done", owner_id: null },
    ]);
    const { rows: history } = await gw.ctx.db.query(
      "SELECT assignment_id, who, what, detail FROM assignment_history WHERE assignment_id = ANY($1) ORDER BY id",
      [[open, done]],
    );
    expect(history).toEqual(
      [open, done].map((id) => ({
        assignment_id: id,
        who: `${owner.name} <${owner.email}>`,
        what: `unassigned: ${dev.name} <${dev.email}> was removed from the organization`,
        detail: { code: "finding.unassigned", automatic: false, previous_owner: dev.email },
      })),
    );
    expect((await gw.admin("GET", `/orgs/${orgId}`)).body.org.default_owner).toBeNull();
    expect((await activity("org.default_owner_set")).at(-1)).toMatchObject({
      grp: "settings",
      who: `${owner.name} <${owner.email}>`,
      detail: { default_owner: null, previous_default_owner: dev.email },
    });
    expect((await activity("member.removed")).at(-1)?.detail).toEqual({
      email: dev.email,
      role: "member",
      assignments_unassigned: 2,
      default_owner_cleared: true,
      tokens_revoked: 0,
    });
  });
});

describe("the last owner", () => {
  it("is never removed nor demoted, by itself, another owner or the operator; with a second owner, either may go", async () => {
    const first = await member("owner");
    await onlyOwners([first.id]);
    expect(await owners()).toBe(1);
    const removed = await as(first, "DELETE", `/orgs/${orgId}/members/${first.id}`);
    expect({ status: removed.status, body: removed.body }, "itself, removed").toEqual({ status: 409, body: conflict });
    const demoted = await as(first, "PATCH", `/orgs/${orgId}/members/${first.id}`, { role: "admin" });
    expect({ status: demoted.status, body: demoted.body }, "itself, demoted").toEqual({ status: 409, body: conflict });
    for (const [method, body] of [
      ["DELETE", undefined],
      ["PATCH", { role: "member" }],
    ] as const) {
      const res = await gw.admin(method, `/orgs/${orgId}/members/${first.id}`, body);
      expect({ status: res.status, body: res.body }, `operator ${method}`).toEqual({ status: 409, body: conflict });
    }
    expect(await owners()).toBe(1);
    expect((await as(first, "GET", "/me")).body.principal.role).toBe("owner");
    expect((await activity("member.removed")).filter((r) => r.detail.email === first.email)).toEqual([]);

    // A second owner: now the first may step down, and then the second is the last.
    const second = await member("member");
    expect((await as(first, "PATCH", `/orgs/${orgId}/members/${second.id}`, { role: "owner" })).status).toBe(200);
    expect((await as(first, "PATCH", `/orgs/${orgId}/members/${first.id}`, { role: "admin" })).status).toBe(200);
    expect((await as(first, "GET", "/me")).body.principal.role).toBe("admin");
    // An admin no longer manages members.
    expect((await as(first, "PATCH", `/orgs/${orgId}/members/${first.id}`, { role: "owner" })).body.reason).toBe("forbidden");
    expect((await as(second, "DELETE", `/orgs/${orgId}/members/${second.id}`)).body).toEqual(conflict);
    // Back to two owners: the second removes itself, its session ends with the answer.
    expect((await as(second, "PATCH", `/orgs/${orgId}/members/${first.id}`, { role: "owner" })).status).toBe(200);
    expect((await as(second, "DELETE", `/orgs/${orgId}/members/${second.id}`)).status).toBe(200);
    expect((await as(second, "GET", "/me")).body.reason).toBe("session_expired");
    expect(await owners()).toBe(1);
  });

  it("two owners demoting each other at once: the owners are counted under a lock, so one of them stays owner", async () => {
    const a = await member("owner");
    const b = await member("owner");
    await onlyOwners([a.id, b.id]);
    for (let round = 0; round < 5; round++) {
      const [byA, byB] = await Promise.all([
        as(a, "PATCH", `/orgs/${orgId}/members/${b.id}`, { role: "member" }),
        as(b, "PATCH", `/orgs/${orgId}/members/${a.id}`, { role: "member" }),
      ]);
      expect([byA.status, byB.status].sort(), `round ${round}`).toEqual([200, 409]);
      expect(await owners(), `round ${round}`).toBe(1);
      // Whoever was demoted is made owner again by the one who stayed.
      const [stayed, demoted] = byA.status === 200 ? [a, b] : [b, a];
      expect((await as(stayed, "PATCH", `/orgs/${orgId}/members/${demoted.id}`, { role: "owner" })).status).toBe(200);
    }
  });
});

describe("who may", () => {
  it("another organization's member answers 404 not_found, exactly like one that does not exist, to its owner and to the operator", async () => {
    const owner = await member("owner");
    const stranger = await member("member", otherOrgId);
    const missing = await as(owner, "DELETE", `/orgs/${orgId}/members/999999999`);
    expect(missing.status).toBe(404);
    for (const [method, body] of [
      ["DELETE", undefined],
      ["PATCH", { role: "owner" }],
    ] as const) {
      const theirs = await as(owner, method, `/orgs/${orgId}/members/${stranger.id}`, body);
      expect({ status: theirs.status, body: theirs.body }, method).toEqual({ status: 404, body: missing.body });
      // Under its own organization's path: not the owner's organization either.
      expect((await as(owner, method, `/orgs/${otherOrgId}/members/${stranger.id}`, body)).body, method).toEqual(missing.body);
      // The operator names the organization; the member is not of it.
      expect((await gw.admin(method, `/orgs/${orgId}/members/${stranger.id}`, body)).body, method).toEqual(missing.body);
    }
    expect((await as(stranger, "GET", "/me")).body.principal.role).toBe("member");
  });

  it("organization tokens never change or remove members (403 forbidden, like minting), whatever their scopes; admins and members neither", async () => {
    const target = await member("member");
    const admin = await member("admin");
    const plain = await member("member");
    const token = async (scopes: string[]) =>
      (await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: `t-${scopes.join("-")}`, scopes })).body.token as string;
    const write = await token(["read", "write"]);
    const read = await token(["read"]);
    for (const [method, body] of [
      ["PATCH", { role: "owner" }],
      ["DELETE", undefined],
    ] as const) {
      const path = `/orgs/${orgId}/members/${target.id}`;
      expect((await withToken(write, method, path, body)).body, `write token ${method}`).toEqual({
        ok: false,
        reason: "forbidden",
        message: expect.any(String),
      });
      expect((await withToken(read, method, path, body)).body.reason, `read token ${method}`).toBe("insufficient_scope");
      expect((await as(admin, method, path, body)).body.reason, `admin ${method}`).toBe("forbidden");
      expect((await as(plain, method, path, body)).body.reason, `member ${method}`).toBe("forbidden");
      // A member cannot make itself more either.
      expect((await as(plain, "PATCH", `/orgs/${orgId}/members/${plain.id}`, { role: "owner" })).body.reason).toBe("forbidden");
    }
    expect((await as(target, "GET", "/me")).body.principal.role).toBe("member");
    expect((await gw.call("/admin/v1/me", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
  });
});
