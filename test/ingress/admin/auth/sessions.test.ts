import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BUDGETS, LIFETIMES } from "../../../../shared/accounts/policy.js";
import { clearedCookie, sessionCookie } from "../../../../ingress/admin/auth/cookie.js";
import { resolveSessionPrincipal } from "../../../../ingress/admin/session-principal.js";
import type { HttpRequest } from "../../../../ingress/types.js";
import { postFrom } from "../../../helpers/from-address.js";
import { startTestGateway, waitFor, type TestGateway } from "../../../helpers/gateway.js";
import { dashboardLinks, mailText, nextLinks, tokenOf } from "../../../helpers/mail-links.js";
import { startSmtpSink, type SmtpSink } from "../../../helpers/smtp-sink.js";
import { accept, advance, invite, joined, memberClient, signInByLink, siteOf } from "./fixtures.js";

/**
 * Invitations, e-mailed sign-in links and sessions over HTTP, against the real gateway,
 * PostgreSQL, Redis and an SMTP sink; lifetimes on the test clock. Passkeys: passkeys.test.ts
 * (software authenticator) and test/embed/passkeys.test.ts (Chromium).
 */

let gw: TestGateway;
let smtp: SmtpSink;
let site: string;
let orgId: number;
let otherOrgId: number;

beforeAll(async () => {
  smtp = await startSmtpSink();
  gw = await startTestGateway("auth-sessions", { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  site = siteOf(gw);
  orgId = (await gw.admin("POST", "/orgs", { name: "Sessions Org" })).body.org.id;
  otherOrgId = (await gw.admin("POST", "/orgs", { name: "Other Org" })).body.org.id;
});

afterAll(async () => {
  await gw?.stop();
  await smtp?.stop();
});

// Every test starts in fresh rate-limit windows (fixed windows of 15 min and 1 h on the clock).
beforeEach(async () => {
  await advance(gw, 3600);
});

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** A request as the route table hands it to resolveSessionPrincipal. */
function request(method: string, headers: Record<string, string>): HttpRequest {
  return {
    method,
    path: "/admin/v1/orgs/1",
    query: "",
    headers,
    headerOrder: Object.keys(headers),
    body: Buffer.alloc(0),
    remoteAddress: "127.0.0.1",
    requestId: "test",
    startedMs: 0,
  };
}

describe("invitations", () => {
  it("POST /orgs/:org/members e-mails a single-use invitation to {SITE_URL}/dashboard/invitation, stored as a SHA-256 digest", async () => {
    const before = smtp.mails.length;
    const added = await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Ivy Invited", email: "ivy@example.com", role: "owner" });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      member: { name: "Ivy Invited", email: "ivy@example.com", role: "owner" },
      invitation: { sent: true },
    });
    const expiresAt = Date.parse(added.body.invitation.expires_at);
    expect(expiresAt - gw.ctx.clock.now()).toBeGreaterThan(LIFETIMES.invitationMs - 60_000);
    expect(expiresAt - gw.ctx.clock.now()).toBeLessThanOrEqual(LIFETIMES.invitationMs);
    const mail = await waitFor(() => smtp.mails.slice(before).find((m) => m.to.includes("ivy@example.com")));
    expect(mail.data).toContain("Subject: You are invited to Sessions Org");
    const [link] = dashboardLinks(mail.data);
    expect(link).toMatch(new RegExp(`^${site}/dashboard/invitation#token=[A-Za-z0-9_-]{43}$`));
    const token = tokenOf(link);
    const { rows } = await gw.ctx.db.query("SELECT purpose, token_hash, used_at FROM member_links WHERE member_id = $1", [
      added.body.member.id,
    ]);
    expect(rows).toEqual([{ purpose: "invitation", token_hash: sha256(token), used_at: null }]);
    const everything = JSON.stringify((await gw.ctx.db.query("SELECT * FROM member_links")).rows);
    expect(everything).not.toContain(token);

    const client = memberClient(gw, site);
    const options = await client.call("POST", "/invitation/accept/options", { token });
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({
      member: { name: "Ivy Invited", email: "ivy@example.com", role: "owner" },
      org: { id: orgId, name: "Sessions Org" },
      options: {
        rp: { id: "localhost" },
        user: { name: "ivy@example.com", displayName: "Ivy Invited" },
        authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
      },
    });
  });

  it("an invitation expires after 72 hours on the service's clock", async () => {
    const member = await invite(gw, smtp, orgId);
    const client = memberClient(gw, site);
    await advance(gw, LIFETIMES.invitationMs / 1000 - 60);
    expect((await client.call("POST", "/invitation/accept/options", { token: member.token })).status).toBe(200);
    await advance(gw, 61);
    const late = await client.call("POST", "/invitation/accept/options", { token: member.token });
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ ok: false, reason: "invalid_link", message: expect.any(String) });
  });

  it("an invitation is not a sign-in link, and a malformed token is a field error", async () => {
    const member = await invite(gw, smtp, orgId);
    const client = memberClient(gw, site);
    expect((await client.call("POST", "/signin/link/consume", { token: member.token })).body.reason).toBe("invalid_link");
    expect((await client.call("POST", "/invitation/accept/options", { token: "short" })).body.reason).toBe("bad_token");
    expect((await client.call("POST", "/invitation/accept/options", {})).body.reason).toBe("missing_token");
    expect((await client.call("POST", "/invitation/accept/options", "[1]")).body.reason).toBe("bad_json");
  });
});

describe("sign-in links", () => {
  it("sign in once; the same link replayed is refused, and the session works", async () => {
    const member = await joined(gw, smtp, orgId, "admin");
    const client = memberClient(gw, site);
    const before = smtp.mails.length;
    const asked = await client.call("POST", "/signin/link", { email: member.email.toUpperCase() });
    expect(asked.status).toBe(200);
    expect(asked.body).toEqual({ ok: true });
    const [link] = await nextLinks(smtp, member.email, before);
    expect(link).toMatch(new RegExp(`^${site}/dashboard/signin#link=[A-Za-z0-9_-]{43}$`));

    // Whose it is, without spending it (the sign-in page asks before it signs in), as often as asked.
    for (let i = 0; i < 2; i++) {
      const peeked = await memberClient(gw, site).call("POST", "/signin/link/peek", { token: tokenOf(link) });
      expect(peeked.status).toBe(200);
      expect(peeked.body).toEqual({
        ok: true,
        member: { name: member.name, email: member.email, role: "admin" },
        org: { id: orgId, name: "Sessions Org" },
        expires_at: expect.any(String),
      });
      expect(peeked.headers.get("cache-control")).toBe("no-store");
      expect(peeked.headers.get("set-cookie")).toBeNull();
    }
    // From a page of another origin: refused, like every step taken without a session.
    const foreign = await gw.call("/admin/v1/auth/signin/link/peek", {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: { token: tokenOf(link) },
    });
    expect(foreign.body.reason).toBe("csrf_rejected");
    // An invitation is not a sign-in link.
    const invited = await invite(gw, smtp, orgId);
    expect((await client.call("POST", "/signin/link/peek", { token: invited.token })).body.reason).toBe("invalid_link");

    const first = await client.call("POST", "/signin/link/consume", { token: tokenOf(link) });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      member: { id: member.id, email: member.email, role: "admin" },
      org: { id: orgId, name: "Sessions Org" },
      session: { method: "link", current: true },
      passkeys: 1,
      csrf_token: expect.any(String),
    });
    expect(first.headers.get("cache-control")).toBe("no-store");
    const replay = await memberClient(gw, site).call("POST", "/signin/link/consume", { token: tokenOf(link) });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ ok: false, reason: "invalid_link", message: expect.any(String) });
    // Spent: nobody is named any more.
    expect((await memberClient(gw, site).call("POST", "/signin/link/peek", { token: tokenOf(link) })).body.reason).toBe("invalid_link");

    const current = await client.call("GET", "/session");
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({
      member: { id: member.id },
      session: { id: first.body.session.id },
      csrf_token: first.body.csrf_token,
    });
  });

  it("a sign-in link expires after 15 minutes", async () => {
    const member = await joined(gw, smtp, orgId);
    const before = smtp.mails.length;
    await memberClient(gw, site).call("POST", "/signin/link", { email: member.email });
    const [link] = await nextLinks(smtp, member.email, before);
    await advance(gw, LIFETIMES.signinLinkMs / 1000 + 1);
    expect((await memberClient(gw, site).call("POST", "/signin/link/peek", { token: tokenOf(link) })).body.reason).toBe("invalid_link");
    expect((await memberClient(gw, site).call("POST", "/signin/link/consume", { token: tokenOf(link) })).body.reason).toBe("invalid_link");
  });

  it("answers the same for an address that is no member's, and e-mails nobody", async () => {
    const member = await joined(gw, smtp, orgId);
    const client = memberClient(gw, site);
    const before = smtp.mails.length;
    const unknown = await client.call("POST", "/signin/link", { email: "nobody@example.com" });
    const known = await client.call("POST", "/signin/link", { email: member.email });
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: known.status, body: known.body });
    await nextLinks(smtp, member.email, before);
    expect(smtp.mails.slice(before).flatMap((m) => m.to)).toEqual([member.email]);
  });

  /** Adds the address to the organization (as whoever runs it may, for any address) and returns the invitation's token. */
  async function addTo(org: number, email: string, role = "member"): Promise<{ id: number; token: string }> {
    const before = smtp.mails.length;
    const added = await gw.admin("POST", `/orgs/${org}/members`, { name: "Both", email, role });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const [link] = await nextLinks(smtp, email, before);
    return { id: added.body.member.id, token: tokenOf(link) };
  }

  it("an address in two organizations gets one e-mail with a link per organization, each named with its id", async () => {
    const email = "both@example.com";
    await accept(gw, await addTo(orgId, email));
    await accept(gw, await addTo(otherOrgId, email, "owner"));
    const before = smtp.mails.length;
    await memberClient(gw, site).call("POST", "/signin/link", { email });
    const mail = await waitFor(() => smtp.mails.slice(before).find((m) => m.to.includes(email)));
    const links = dashboardLinks(mail.data);
    expect(links).toHaveLength(2);
    const text = mailText(mail.data);
    expect(text).toMatch(new RegExp(`Sessions Org \\(organization ${orgId}\\):\\r?\\n${site}/dashboard/signin#link=`));
    expect(text).toMatch(new RegExp(`Other Org \\(organization ${otherOrgId}\\):\\r?\\n${site}/dashboard/signin#link=`));
    const orgs = [];
    for (const link of links)
      orgs.push((await memberClient(gw, site).call("POST", "/signin/link/consume", { token: tokenOf(link) })).body.org.name);
    expect(orgs.sort()).toEqual(["Other Org", "Sessions Org"]);
  });

  it("a membership nobody accepted gets no sign-in link: a stranger's organization named like yours stays out of your mailbox", async () => {
    // The member's own organization, accepted; then a stranger makes one of the same name
    // and adds the member's address to it.
    const email = "victim@example.com";
    const own = await addTo(orgId, email, "owner");
    await accept(gw, own);
    const lookalikeId = (await gw.admin("POST", "/orgs", { name: "Sessions Org" })).body.org.id;
    const planted = await addTo(lookalikeId, email, "owner");

    const before = smtp.mails.length;
    await memberClient(gw, site).call("POST", "/signin/link", { email });
    const mail = await waitFor(() => smtp.mails.slice(before).find((m) => m.to.includes(email)));
    const links = dashboardLinks(mail.data);
    expect(links).toHaveLength(1);
    expect(mailText(mail.data)).toContain(`Open this link to sign in to Sessions Org (organization ${orgId}):`);
    expect(mailText(mail.data)).not.toContain(`organization ${lookalikeId}`);
    const peeked = await memberClient(gw, site).call("POST", "/signin/link/peek", { token: tokenOf(links[0]) });
    expect(peeked.body.org).toEqual({ id: orgId, name: "Sessions Org" });
    // The links were made before the e-mail went: the planted membership has none.
    const { rows } = await gw.ctx.db.query("SELECT count(*)::int AS n FROM member_links WHERE member_id = $1 AND purpose = 'signin'", [
      planted.id,
    ]);
    expect(rows[0].n).toBe(0);

    // An address with no accepted membership at all gets nothing, as a stranger's does.
    const only = await invite(gw, smtp, lookalikeId);
    const mailsBefore = smtp.mails.length;
    await memberClient(gw, site).call("POST", "/signin/link", { email: only.email });
    // Its invitation is still its way in; once accepted, the membership is sent links.
    await accept(gw, only);
    const after = smtp.mails.length;
    await memberClient(gw, site).call("POST", "/signin/link", { email: only.email });
    const [link] = await nextLinks(smtp, only.email, after);
    expect(smtp.mails.slice(mailsBefore).filter((m) => m.to.includes(only.email))).toHaveLength(1);
    expect((await memberClient(gw, site).call("POST", "/signin/link/peek", { token: tokenOf(link) })).body.org.id).toBe(lookalikeId);
  });
});

describe("sessions", () => {
  it("the cookie is HttpOnly, SameSite=Lax, Path=/, lasts the absolute lifetime, Secure with __Host- on an https site; the token is stored as a digest", async () => {
    const member = await joined(gw, smtp, orgId);
    const client = memberClient(gw, site);
    const before = smtp.mails.length;
    await client.call("POST", "/signin/link", { email: member.email });
    const [link] = await nextLinks(smtp, member.email, before);
    const signed = await client.call("POST", "/signin/link/consume", { token: tokenOf(link) });
    const cookie = signed.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^gw_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    const token = /^gw_session=([^;]+)/.exec(cookie)?.[1] ?? "";
    const { rows } = await gw.ctx.db.query("SELECT token_hash FROM member_sessions WHERE id = $1", [signed.body.session.id]);
    expect(rows[0].token_hash).toEqual(sha256(token));
    expect(JSON.stringify((await gw.ctx.db.query("SELECT * FROM member_sessions")).rows)).not.toContain(token);

    expect(sessionCookie("https://gw.example.com", "t", 60)).toBe(
      "__Host-gw_session=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure",
    );
    expect(clearedCookie("https://gw.example.com")).toBe("__Host-gw_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
  });

  it("resolveSessionPrincipal: null without a cookie, the member principal with one, a refusal for a dead session or a failed CSRF check", async () => {
    const member = await joined(gw, smtp, orgId, "admin");
    const client = await signInByLink(gw, smtp, member.email);
    const deps = gw.ingress.deps;
    expect(await resolveSessionPrincipal(request("GET", {}), deps)).toBeNull();
    expect(await resolveSessionPrincipal(request("GET", { cookie: "other=1" }), deps)).toBeNull();
    const session = (await client.call("GET", "/session")).body.session.id;
    expect(await resolveSessionPrincipal(request("GET", { cookie: `a=b; ${client.cookie}` }), deps)).toEqual({
      principal: {
        kind: "member",
        orgId,
        orgName: "Sessions Org",
        memberId: member.id,
        role: "admin",
        name: member.name,
        email: member.email,
        sessionId: session,
      },
    });
    const post = (headers: Readonly<Record<string, string | undefined>>) =>
      resolveSessionPrincipal(request("POST", { cookie: client.cookie, ...(headers as Record<string, string>) }), deps);
    expect(await post({ origin: site, "x-csrf-token": client.csrf })).toMatchObject({ principal: { kind: "member" } });
    for (const headers of [
      {},
      { origin: site },
      { "x-csrf-token": client.csrf },
      { origin: "http://evil.example", "x-csrf-token": client.csrf },
      { origin: site, "x-csrf-token": "x" },
    ]) {
      const refused = await post(headers);
      expect(refused && "refusal" in refused ? refused.refusal : null, JSON.stringify(headers)).toMatchObject({
        status: 403,
        body: { reason: "csrf_rejected" },
      });
    }
    for (const cookie of ["gw_session=garbage", `gw_session=${"A".repeat(43)}`]) {
      const refused = await resolveSessionPrincipal(request("GET", { cookie }), deps);
      expect(refused && "refusal" in refused ? refused.refusal : null).toMatchObject({
        status: 401,
        body: { reason: "session_expired" },
        headers: { "set-cookie": clearedCookie(site) },
      });
    }
  });

  it("a session revoked from another session stops working on the next request", async () => {
    const member = await joined(gw, smtp, orgId);
    const laptop = await signInByLink(gw, smtp, member.email);
    const phone = await signInByLink(gw, smtp, member.email);
    const listed = await laptop.call("GET", "/sessions");
    expect(listed.body.sessions).toHaveLength(2);
    const phoneSession = listed.body.sessions.find((s: { current: boolean }) => !s.current);
    expect(phoneSession).toMatchObject({ method: "link", current: false, user_agent: expect.any(String) });
    expect((await phone.call("GET", "/session")).status).toBe(200);

    const revoked = await laptop.call("DELETE", `/sessions/${phoneSession.id}`);
    expect(revoked.status).toBe(200);
    const refused = await phone.call("GET", "/session");
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ ok: false, reason: "session_expired", message: expect.any(String) });
    expect(refused.headers.get("set-cookie")).toBe(clearedCookie(site));
    expect((await laptop.call("GET", "/session")).status).toBe(200);
    expect((await laptop.call("DELETE", `/sessions/${phoneSession.id}`)).status).toBe(404);

    const { rows } = await gw.ctx.db.query(
      "SELECT grp, who, action_code, detail FROM activity WHERE org_id = $1 AND action_code = 'session.revoked' ORDER BY id DESC LIMIT 1",
      [orgId],
    );
    expect(rows[0]).toMatchObject({
      grp: "team_security",
      who: `${member.name} <${member.email}>`,
      detail: { session_id: phoneSession.id },
    });
  });

  it("a member cannot see or revoke another member's sessions", async () => {
    const ann = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const bob = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const bobSession = (await bob.call("GET", "/session")).body.session.id;
    expect((await ann.call("GET", "/sessions")).body.sessions.map((s: { id: number }) => s.id)).not.toContain(bobSession);
    expect((await ann.call("DELETE", `/sessions/${bobSession}`)).body).toEqual({
      ok: false,
      reason: "not_found",
      message: expect.any(String),
    });
    expect((await bob.call("GET", "/session")).status).toBe(200);
  });

  it("sign-out ends the session and drops the cookie", async () => {
    const client = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const cookie = client.cookie;
    const out = await client.call("POST", "/signout");
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toBe(clearedCookie(site));
    client.cookie = cookie;
    expect((await client.call("GET", "/session")).body.reason).toBe("session_expired");
    expect((await memberClient(gw, site).call("GET", "/session")).body).toEqual({
      ok: false,
      reason: "unauthorized",
      message: expect.any(String),
    });
  });

  it("the idle lifetime (12 h) ends a session left unused; using it keeps it alive", async () => {
    const client = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const idleS = LIFETIMES.sessionIdleMs / 1000;
    await advance(gw, idleS - 60);
    expect((await client.call("GET", "/session")).status).toBe(200);
    await advance(gw, idleS - 60);
    const alive = await client.call("GET", "/session");
    expect(alive.status).toBe(200);
    await advance(gw, idleS + 1);
    expect((await client.call("GET", "/session")).body.reason).toBe("session_expired");
  });

  it("the absolute lifetime (7 days) ends a session however much it is used", async () => {
    const client = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const stepS = LIFETIMES.sessionIdleMs / 1000 - 3600;
    let elapsedS = 0;
    while (elapsedS + stepS < LIFETIMES.sessionAbsoluteMs / 1000) {
      await advance(gw, stepS);
      elapsedS += stepS;
      expect((await client.call("GET", "/session")).status, `after ${elapsedS} s`).toBe(200);
    }
    await advance(gw, LIFETIMES.sessionAbsoluteMs / 1000 - elapsedS);
    expect((await client.call("GET", "/session")).body.reason).toBe("session_expired");
  });
});

describe("CSRF", () => {
  it("a change with the session needs the site's Origin and the session's CSRF token", async () => {
    const client = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const csrf = client.csrf;
    const attempts: [string, Record<string, string>][] = [
      ["no Origin, no token", { origin: "", "x-csrf-token": "" }],
      ["another origin with the token", { origin: "http://evil.example", "x-csrf-token": csrf }],
      [
        "a sibling origin (another port) with the token",
        { origin: `http://localhost:${Number(new URL(site).port) + 1}`, "x-csrf-token": csrf },
      ],
      ["the site's Origin without the token", { origin: site, "x-csrf-token": "" }],
      [
        "the site's Origin with another session's token",
        { origin: site, "x-csrf-token": (await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email)).csrf },
      ],
    ];
    for (const [label, headers] of attempts) {
      const refused = await client.call("POST", "/signout", {}, headers);
      expect({ status: refused.status, body: refused.body }, label).toEqual({
        status: 403,
        body: { ok: false, reason: "csrf_rejected", message: expect.any(String) },
      });
      expect(
        (await client.call("DELETE", `/sessions/${(await client.call("GET", "/session")).body.session.id}`, undefined, headers)).status,
        label,
      ).toBe(403);
    }
    expect((await client.call("GET", "/session", undefined, { origin: "" })).status).toBe(200);
    expect((await client.call("POST", "/signout")).status).toBe(200);
  });

  it("a sign-in step from a page of another origin is refused; a client outside a browser sends no Origin and is served", async () => {
    const evil = await gw.call("/admin/v1/auth/signin/options", { body: {}, headers: { origin: "http://evil.example" } });
    expect(evil.status).toBe(403);
    expect(evil.body.reason).toBe("csrf_rejected");
    expect((await gw.call("/admin/v1/auth/signin/options", { body: {} })).status).toBe(200);
    expect((await gw.call("/admin/v1/auth/signin/options", { body: {}, headers: { origin: site } })).status).toBe(200);
  });
});

describe("rate limits", () => {
  const post = (source: string, path: string, body: unknown) => postFrom(gw.url, source, `/admin/v1/auth${path}`, body, { origin: site });

  it("sign-in links: 5 an hour per e-mail address, member or not, from any number of sources", async () => {
    const member = await invite(gw, smtp, orgId);
    for (const email of [member.email, "stranger@example.com"]) {
      for (let i = 1; i <= BUDGETS.linkPerEmail.limit; i++)
        expect((await post(`127.0.1.${i}`, "/signin/link", { email })).status).toBe(200);
      const refused = await post("127.0.1.99", "/signin/link", { email: email.toUpperCase() });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ ok: false, reason: "signin_rate_limited", message: expect.any(String) });
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(3600);
    }
    await advance(gw, 3600);
    expect((await post("127.0.1.1", "/signin/link", { email: member.email })).status).toBe(200);
  });

  it("sign-in links: 10 an hour per source address", async () => {
    for (let i = 0; i < BUDGETS.linkPerSource.limit; i++)
      expect((await post("127.0.2.1", "/signin/link", { email: `src${i}@example.com` })).status).toBe(200);
    expect((await post("127.0.2.1", "/signin/link", { email: "src-last@example.com" })).body.reason).toBe("signin_rate_limited");
    expect((await post("127.0.2.2", "/signin/link", { email: "src-last@example.com" })).status).toBe(200);
  });

  it("sign-in ceremonies: 60 calls per 15 minutes per source address", async () => {
    for (let i = 0; i < BUDGETS.ceremonyPerSource.limit; i++) expect((await post("127.0.3.1", "/signin/options", {})).status).toBe(200);
    expect((await post("127.0.3.1", "/signin/options", {})).body.reason).toBe("signin_rate_limited");
    expect((await post("127.0.3.1", "/signin/link/consume", { token: "A".repeat(43) })).body.reason).toBe("signin_rate_limited");
    expect((await post("127.0.3.1", "/invitation/accept/options", { token: "A".repeat(43) })).body.reason).toBe("signin_rate_limited");
    expect((await post("127.0.3.2", "/signin/options", {})).status).toBe(200);
    await advance(gw, BUDGETS.ceremonyPerSource.windowS);
    expect((await post("127.0.3.1", "/signin/options", {})).status).toBe(200);
  });

  it("the counters name no address and no e-mail", async () => {
    await post("127.0.4.1", "/signin/link", { email: "counted@example.com" });
    const names = await gw.ctx.redis.keys(`${gw.prefix}auth:budget:*`);
    expect(names.length).toBeGreaterThan(0);
    expect(names.join(" ")).not.toMatch(/127\.0\.|counted|example\.com/);
  });
});

describe("garbage", () => {
  it("malformed bodies and WebAuthn answers are refusals, never a 5xx", async () => {
    const client = await signInByLink(gw, smtp, (await joined(gw, smtp, orgId)).email);
    const b64 = (text: string) => Buffer.from(text).toString("base64url");
    const answers = [
      {
        id: "x",
        rawId: "x",
        type: "public-key",
        response: { clientDataJSON: "!!!", attestationObject: "!!!", authenticatorData: "!!!", signature: "!!!" },
      },
      {
        id: "x",
        rawId: "x",
        type: "public-key",
        response: { clientDataJSON: b64("null"), attestationObject: b64("x"), authenticatorData: b64("x"), signature: "" },
      },
      {
        id: "x",
        rawId: "x",
        type: "public-key",
        response: { clientDataJSON: b64('{"challenge":"../../x"}'), attestationObject: "", authenticatorData: "", signature: "" },
      },
      { id: "x\u0000", rawId: "x", type: "public-key", response: {} },
      { id: 1, response: [] },
    ];
    const bodies: unknown[] = [
      "",
      "null",
      "[]",
      "{",
      '"x"',
      { token: null },
      { token: "A".repeat(43), response: "x" },
      { email: ["a@b.cd"] },
      { name: "x".repeat(200) },
    ];
    for (const response of answers) bodies.push({ response }, { token: "A".repeat(43), response });
    for (const path of ["/sessions/abc", "/sessions/99999999999999999999", "/passkeys/-1", "/passkeys/%00"]) {
      expect((await client.call("DELETE", path)).body.reason).toBe("not_found");
    }
    // The session's own calls first (adding a passkey needs a fresh sign-in), then every
    // ceremony call in fresh rate-limit windows, so every body reaches its handler.
    const paths = [
      "/passkeys/options",
      "/passkeys/verify",
      "/invitation/accept/options",
      "/invitation/accept/verify",
      "/signin/options",
      "/signin/verify",
      "/signin/link",
      "/signin/link/peek",
      "/signin/link/consume",
    ];
    for (const path of paths) {
      for (const body of bodies) {
        if (!path.startsWith("/passkeys")) await advance(gw, 3600);
        const answer = await client.call("POST", path, body);
        expect(answer.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        expect(answer.status, `${path} ${JSON.stringify(body)}`).not.toBe(429);
      }
    }
  });
});
