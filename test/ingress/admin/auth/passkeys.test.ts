import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ORG_LIMITS } from "../../../../shared/accounts/limits.js";
import { BUDGETS, LIFETIMES } from "../../../../shared/accounts/policy.js";
import { startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../../../helpers/smtp-sink.js";
import { authenticate, register, type SoftPasskey } from "../../../helpers/soft-authenticator.js";
import { advance, invite, memberClient, signInByLink, siteOf, type MemberClient } from "./fixtures.js";

/**
 * Passkeys over HTTP with a software authenticator (test/helpers/soft-authenticator.ts):
 * the refusals a browser never produces on its own (replays, counters rolled back, another
 * origin, another member's credential ID or user handle). The browser path itself:
 * test/embed/passkeys.test.ts.
 */

let gw: TestGateway;
let smtp: SmtpSink;
let site: string;
let orgId: number;

beforeAll(async () => {
  smtp = await startSmtpSink();
  gw = await startTestGateway("auth-passkeys", { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  site = siteOf(gw);
  orgId = (await gw.admin("POST", "/orgs", { name: "Passkeys Org" })).body.org.id;
});

afterAll(async () => {
  await gw?.stop();
  await smtp?.stop();
});

beforeEach(async () => {
  await advance(gw, 3600);
});

/** A member invited and registered with a software passkey through the invitation; signed in. */
async function registered(
  role = "member",
): Promise<{ member: Awaited<ReturnType<typeof invite>>; passkey: SoftPasskey; client: MemberClient }> {
  const member = await invite(gw, smtp, orgId, role);
  const client = memberClient(gw, site);
  const options = await client.call("POST", "/invitation/accept/options", { token: member.token });
  const { passkey, response } = register(options.body.options, site);
  const verified = await client.call("POST", "/invitation/accept/verify", { token: member.token, response, name: "Soft key" });
  if (verified.status !== 201) throw new Error(`not registered: ${JSON.stringify(verified.body)}`);
  return { member, passkey, client };
}

async function signIn(passkey: SoftPasskey, override: { origin?: string; counter?: number } = {}) {
  const client = memberClient(gw, site);
  const options = await client.call("POST", "/signin/options");
  const response = authenticate(passkey, options.body.options, override.origin ?? site, override);
  return { client, response, answer: await client.call("POST", "/signin/verify", { response }) };
}

describe("invitation to passkey", () => {
  it("registers the passkey, spends the invitation and signs in; the activity names the member", async () => {
    const member = await invite(gw, smtp, orgId, "owner");
    const client = memberClient(gw, site);
    const options = await client.call("POST", "/invitation/accept/options", { token: member.token });
    expect(options.body.options).toMatchObject({
      rp: { id: "localhost", name: "Access gateway" },
      attestation: "none",
      excludeCredentials: [],
    });
    const { response } = register(options.body.options, site);
    const verified = await client.call("POST", "/invitation/accept/verify", { token: member.token, response, name: "Work laptop" });
    expect(verified.status).toBe(201);
    expect(verified.body).toMatchObject({ member: { id: member.id, role: "owner" }, session: { method: "invitation" }, passkeys: 1 });
    expect(verified.headers.get("set-cookie")).toMatch(/^gw_session=/);
    expect((await client.call("GET", "/passkeys")).body.passkeys).toEqual([
      {
        id: expect.any(Number),
        name: "Work laptop",
        created_at: expect.any(String),
        last_used_at: null,
        device_type: "singleDevice",
        backed_up: false,
      },
    ]);

    expect((await memberClient(gw, site).call("POST", "/invitation/accept/options", { token: member.token })).body.reason).toBe(
      "invalid_link",
    );
    const again = register({ challenge: "A".repeat(43), rp: { id: "localhost" }, user: { id: "AAAA" } }, site);
    expect(
      (await memberClient(gw, site).call("POST", "/invitation/accept/verify", { token: member.token, response: again.response })).body
        .reason,
    ).toBe("invalid_link");

    const { rows } = await gw.ctx.db.query("SELECT grp, who, action_code FROM activity WHERE org_id = $1 AND who LIKE $2 ORDER BY id", [
      orgId,
      `%${member.email}%`,
    ]);
    expect(rows).toEqual([
      { grp: "team_security", who: `${member.name} <${member.email}>`, action_code: "passkey.added" },
      { grp: "team_security", who: `${member.name} <${member.email}>`, action_code: "member.signed_in" },
    ]);
  });

  it("refuses an answer to another invitation's challenge, to a spent challenge, or from another origin, and keeps the link usable", async () => {
    const ann = await invite(gw, smtp, orgId);
    const bob = await invite(gw, smtp, orgId);
    const client = memberClient(gw, site);
    const annOptions = (await client.call("POST", "/invitation/accept/options", { token: ann.token })).body.options;
    const forAnn = register(annOptions, site);
    expect((await client.call("POST", "/invitation/accept/verify", { token: bob.token, response: forAnn.response })).body.reason).toBe(
      "invalid_passkey",
    );
    // The challenge went with that attempt: the same answer with the right token is refused too.
    expect((await client.call("POST", "/invitation/accept/verify", { token: ann.token, response: forAnn.response })).body.reason).toBe(
      "invalid_passkey",
    );
    const elsewhere = register(
      (await client.call("POST", "/invitation/accept/options", { token: ann.token })).body.options,
      "http://evil.example",
    );
    expect((await client.call("POST", "/invitation/accept/verify", { token: ann.token, response: elsewhere.response })).body.reason).toBe(
      "invalid_passkey",
    );
    const late = register((await client.call("POST", "/invitation/accept/options", { token: ann.token })).body.options, site);
    await advance(gw, LIFETIMES.challengeMs / 1000 + 1);
    expect((await client.call("POST", "/invitation/accept/verify", { token: ann.token, response: late.response })).body.reason).toBe(
      "invalid_passkey",
    );
    const good = register((await client.call("POST", "/invitation/accept/options", { token: ann.token })).body.options, site);
    expect((await client.call("POST", "/invitation/accept/verify", { token: ann.token, response: good.response })).status).toBe(201);
  });

  it("refuses a credential ID that is registered already (another member's passkey cannot be claimed)", async () => {
    const { passkey } = await registered();
    const thief = await invite(gw, smtp, orgId);
    const client = memberClient(gw, site);
    const options = (await client.call("POST", "/invitation/accept/options", { token: thief.token })).body.options;
    const claimed = register(options, site, { credentialId: passkey.credentialId });
    const refused = await client.call("POST", "/invitation/accept/verify", { token: thief.token, response: claimed.response });
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe("conflict");
    expect((await client.call("POST", "/invitation/accept/options", { token: thief.token })).status).toBe(200);
  });
});

describe("passkey sign-in", () => {
  it("signs in with the passkey; the counter and last use are recorded", async () => {
    const { member, passkey } = await registered("admin");
    const { answer, client } = await signIn(passkey);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      member: { id: member.id, role: "admin" },
      org: { id: orgId },
      session: { method: "passkey" },
      passkeys: 1,
    });
    const { rows } = await gw.ctx.db.query("SELECT counter, last_used_at FROM member_passkeys WHERE credential_id = $1", [
      passkey.credentialId.toString("base64url"),
    ]);
    expect(rows[0].counter).toBe(passkey.counter);
    expect(rows[0].last_used_at).not.toBeNull();
    expect((await client.call("GET", "/session")).body.session.method).toBe("passkey");
  });

  it("refuses a replayed answer, a counter that does not move forward, another origin, another member's user handle and an unknown passkey", async () => {
    const { passkey } = await registered();
    const first = await signIn(passkey);
    expect(first.answer.status).toBe(200);
    // The same answer again: its challenge is spent.
    expect((await memberClient(gw, site).call("POST", "/signin/verify", { response: first.response })).body.reason).toBe("invalid_passkey");
    // A fresh challenge signed with an old counter: a cloned authenticator.
    expect((await signIn(passkey, { counter: passkey.counter })).answer.body.reason).toBe("invalid_passkey");
    expect((await signIn(passkey, { counter: 1 })).answer.body.reason).toBe("invalid_passkey");
    expect((await signIn(passkey, { origin: "http://localhost:1", counter: 100 })).answer.body.reason).toBe("invalid_passkey");
    const other = await registered();
    expect((await signIn({ ...passkey, userHandle: other.passkey.userHandle }, { counter: 200 })).answer.body.reason).toBe(
      "invalid_passkey",
    );
    const stranger = register({ challenge: "x", rp: { id: "localhost" }, user: { id: passkey.userHandle } }, site).passkey;
    expect((await signIn(stranger)).answer.body.reason).toBe("invalid_passkey");
    expect((await signIn(passkey, { counter: 300 })).answer.status).toBe(200);
  });

  it("a challenge lives 5 minutes on the service's clock", async () => {
    const { passkey } = await registered();
    const client = memberClient(gw, site);
    const options = (await client.call("POST", "/signin/options")).body.options;
    await advance(gw, LIFETIMES.challengeMs / 1000 + 1);
    expect((await client.call("POST", "/signin/verify", { response: authenticate(passkey, options, site) })).body.reason).toBe(
      "invalid_passkey",
    );
  });

  it("10 failed answers with a member's passkey in 15 minutes stop that member's passkey sign-in until the window ends", async () => {
    const { passkey } = await registered();
    for (let i = 0; i < BUDGETS.failuresPerEmail.limit; i++) {
      expect((await signIn(passkey, { origin: "http://evil.example" })).answer.body.reason).toBe("invalid_passkey");
    }
    const limited = await signIn(passkey, { counter: passkey.counter + 1 });
    expect(limited.answer.status).toBe(429);
    expect(limited.answer.body.reason).toBe("signin_rate_limited");
    await advance(gw, BUDGETS.failuresPerEmail.windowS);
    expect((await signIn(passkey)).answer.status).toBe(200);
  });
});

describe("the member's passkeys", () => {
  it(`holds at most ${ORG_LIMITS.passkeys} passkeys per member: options and verify refuse 409 limit_reached past it`, async () => {
    const { member, client } = await registered();
    // The member's first passkey, and all but two more of the limit, written directly.
    await gw.ctx.db.query(
      `INSERT INTO member_passkeys (member_id, credential_id, public_key, counter, device_type, backed_up, name, created_at)
       SELECT $1::bigint, 'seeded-' || $1::text || '-' || n, '\\x00', 0, 'singleDevice', false, 'Seeded ' || n, now() FROM generate_series(1, $2) AS n`,
      [member.id, ORG_LIMITS.passkeys - 2],
    );
    const early = await client.call("POST", "/passkeys/options");
    const late = await client.call("POST", "/passkeys/options");
    expect([early.status, late.status]).toEqual([200, 200]);
    const first = register(early.body.options, site);
    expect((await client.call("POST", "/passkeys/verify", { response: first.response })).status).toBe(201);
    // Full now: the options it was given before are refused at verify, and no new options.
    const second = register(late.body.options, site);
    const refused = await client.call("POST", "/passkeys/verify", { response: second.response });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ reason: "limit_reached", resource: "passkeys", limit: ORG_LIMITS.passkeys });
    expect((await client.call("POST", "/passkeys/options")).body.reason).toBe("limit_reached");
    expect((await client.call("GET", "/passkeys")).body.passkeys).toHaveLength(ORG_LIMITS.passkeys);
  });

  it("a fresh session adds a passkey; an older one must sign in again; the last passkey stays", async () => {
    const { member, passkey, client } = await registered();
    const options = await client.call("POST", "/passkeys/options");
    expect(options.status).toBe(200);
    expect(options.body.options.excludeCredentials).toEqual([
      { id: passkey.credentialId.toString("base64url"), type: "public-key", transports: ["internal"] },
    ]);
    const second = register(options.body.options, site);
    const added = await client.call("POST", "/passkeys/verify", { response: second.response, name: "Phone" });
    expect(added.status).toBe(201);
    expect(added.body.passkey).toMatchObject({ name: "Phone" });
    const listed = (await client.call("GET", "/passkeys")).body.passkeys;
    expect(listed.map((p: { name: string }) => p.name)).toEqual(["Soft key", "Phone"]);
    expect(JSON.stringify(listed)).not.toMatch(/public_key|credential/);

    await advance(gw, LIFETIMES.freshSigninMs / 1000 + 1);
    expect((await client.call("POST", "/passkeys/options")).body).toEqual({
      ok: false,
      reason: "reauthentication_required",
      message: expect.any(String),
    });
    expect((await client.call("POST", "/passkeys/verify", { response: second.response })).body.reason).toBe("reauthentication_required");

    expect((await client.call("DELETE", `/passkeys/${listed[0].id}`)).status).toBe(200);
    const last = await client.call("DELETE", `/passkeys/${listed[1].id}`);
    expect(last.status).toBe(409);
    expect(last.body.reason).toBe("conflict");
    expect((await client.call("DELETE", `/passkeys/${listed[0].id}`)).body.reason).toBe("not_found");
    // The removed passkey no longer signs in; the phone does.
    expect((await signIn(passkey)).answer.body.reason).toBe("invalid_passkey");
    expect((await signIn(second.passkey)).answer.status).toBe(200);

    const { rows } = await gw.ctx.db.query(
      "SELECT action_code FROM activity WHERE org_id = $1 AND who LIKE $2 AND grp = 'team_security' ORDER BY id",
      [orgId, `%${member.email}%`],
    );
    expect(rows.map((r) => r.action_code)).toEqual([
      "passkey.added",
      "member.signed_in",
      "passkey.added",
      "passkey.removed",
      "member.signed_in",
    ]);
  });

  it("a session from an e-mailed link adds a passkey (the recovery path); a challenge of another session is refused", async () => {
    const { member } = await registered();
    const recovered = await signInByLink(gw, smtp, member.email);
    const other = await signInByLink(gw, smtp, member.email);
    const options = (await other.call("POST", "/passkeys/options")).body.options;
    const wrong = register(options, site);
    expect((await recovered.call("POST", "/passkeys/verify", { response: wrong.response })).body.reason).toBe("invalid_passkey");
    const right = register((await recovered.call("POST", "/passkeys/options")).body.options, site);
    expect((await recovered.call("POST", "/passkeys/verify", { response: right.response })).status).toBe(201);
    expect((await signIn(right.passkey)).answer.status).toBe(200);
  });

  it("a member cannot remove another member's passkey", async () => {
    const ann = await registered();
    const bob = await registered();
    await bob.client.call("POST", "/passkeys/verify", {
      response: register((await bob.client.call("POST", "/passkeys/options")).body.options, site).response,
    });
    const bobKeys = (await bob.client.call("GET", "/passkeys")).body.passkeys;
    expect(bobKeys).toHaveLength(2);
    expect((await ann.client.call("DELETE", `/passkeys/${bobKeys[0].id}`)).body.reason).toBe("not_found");
    expect((await bob.client.call("GET", "/passkeys")).body.passkeys).toHaveLength(2);
  });
});
