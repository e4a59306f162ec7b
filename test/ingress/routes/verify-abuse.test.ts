import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postFrom } from "../../helpers/from-address.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { BROWSER_HEADERS, BROWSER_SIGNALS, botcheckCall, botcheckKey } from "./botcheck-fixtures.js";
import { advance, clientSetup, patchKey, usedOf } from "./verify-fixtures.js";

/**
 * Abuse of a public client key (docs/security.md, item 1): anyone who reads a page's
 * source holds its key. Counted refusals do not take the key's slots, and the opt-in
 * per-source limit stops a flood from one address before it reaches the key's window.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("verifyabuse");
});
afterAll(async () => {
  await gw?.stop();
});

const ATTACKER = "127.0.0.66";
const VISITOR = "127.0.0.77";

const from = (address: string, params: Record<string, unknown>) => postFrom(gw.url, address, "/api/v1/verify.php", params);

async function topOfMinute(): Promise<void> {
  const now = (await gw.admin("GET", "/clock")).body.now as number;
  await advance(gw, 60 - (now % 60));
}

async function burst(n: number, call: () => Promise<{ body: { reason: string } }>): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  for (const answer of await Promise.all(Array.from({ length: n }, call))) tally[answer.body.reason] = (tally[answer.body.reason] ?? 0) + 1;
  return tally;
}

describe("per-minute window against a flood of a public key", () => {
  it("wrong-place refusals do not take the key's slots (they still count against the allowance)", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 5 });
    await topOfMinute();
    const flood = await burst(5, () => from(ATTACKER, { key: made.key, domain: "attacker.example.net" }));
    expect(flood).toEqual({ domain_mismatch: 5 });
    expect(await usedOf(gw, made.orgId)).toBe(5);
    // The key's own window is untouched: the site's visitors get all five slots.
    expect(await burst(5, () => from(VISITOR, { key: made.key, domain: "example.com" }))).toEqual({ ok: 5 });
    // Each window stays a burst guard of its own.
    expect((await from(ATTACKER, { key: made.key, domain: "attacker.example.net" })).body.reason).toBe("rate_limited");
    expect((await from(VISITOR, { key: made.key, domain: "example.com" })).body.reason).toBe("rate_limited");
    expect(await usedOf(gw, made.orgId)).toBe(10);
  });

  it("no counted refusal takes the key's slots: a scope the key lacks, a bot's user agent", async () => {
    // The refusals of both share the key's refusal window: ten slots hold them.
    const made = await botcheckKey(gw, {}, { rate_per_minute: 10, scopes: ["read"] });
    await topOfMinute();
    // A stranger with the public key and the right domain, asking for a scope the key lacks...
    expect(await burst(5, () => from(ATTACKER, { key: made.key, domain: "example.com", scope: "write" }))).toEqual({
      insufficient_scope: 5,
    });
    // ... and calling the bot check as what it is (curl), with the site's Origin.
    const bot = { ...BROWSER_HEADERS, "user-agent": "curl/8.5.0" };
    const refused = await Promise.all(Array.from({ length: 5 }, () => botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS }, bot)));
    expect(refused.map((r) => r.body.reason)).toEqual(Array(5).fill("bot_ua"));
    expect(await usedOf(gw, made.orgId)).toBe(10);
    // The site's visitors still get all ten slots of the key's window.
    expect(await burst(10, () => from(VISITOR, { key: made.key, domain: "example.com" }))).toEqual({ ok: 10 });
    expect((await from(VISITOR, { key: made.key, domain: "example.com" })).body.reason).toBe("rate_limited");
  });

  it("installation refusals take the refusal window: made-up installation ids cannot use up the site's slots", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 6 });
    // The site's own installation is the key's first: approved.
    expect((await from(VISITOR, { key: made.key, domain: "example.com", install: "site-main" })).body.reason).toBe("ok");
    await topOfMinute();
    // A stranger with the public key names installations of its own: each is recorded pending
    // (or past the day's pending cap), a counted refusal.
    const flood = await burst(6, () => from(ATTACKER, { key: made.key, domain: "example.com", install: `bot-${Math.random()}` }));
    expect(Object.keys(flood).every((reason) => reason.startsWith("installation_"))).toBe(true);
    expect(Object.values(flood).reduce((a, b) => a + b, 0)).toBe(6);
    // The refusal window is full for the stranger...
    expect((await from(ATTACKER, { key: made.key, domain: "example.com", install: "bot-more" })).body.reason).toBe("rate_limited");
    // ...and the site's approved installation still gets every slot of the key's window.
    expect(await burst(6, () => from(VISITOR, { key: made.key, domain: "example.com", install: "site-main" }))).toEqual({ ok: 6 });
    expect((await from(VISITOR, { key: made.key, domain: "example.com", install: "site-main" })).body.reason).toBe("rate_limited");
  });

  it("by default one source calling R times still gets exactly R", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 8 });
    expect(made.details.rate_per_source_per_minute).toBeNull();
    await topOfMinute();
    expect(await burst(10, () => from(ATTACKER, { key: made.key, domain: "example.com" }))).toEqual({ ok: 8, rate_limited: 2 });
  });

  it("with rate_per_source_per_minute set, a flood from one address cannot make another address's calls fail", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 20 });
    await patchKey(gw, made.id, { rate_per_source_per_minute: 4 });
    expect((await gw.admin("GET", `/keys/${made.id}`)).body.details.rate_per_source_per_minute).toBe(4);
    await topOfMinute();
    // The attacker claims the right domain (a client key's domain is only a claim) and floods.
    const flood = await burst(60, () => from(ATTACKER, { key: made.key, domain: "example.com" }));
    expect(flood).toEqual({ ok: 4, rate_limited: 56 });
    expect(await usedOf(gw, made.orgId)).toBe(4);
    // The real visitor's calls all pass: the key's shared window held only the attacker's 4.
    expect(await burst(4, () => from(VISITOR, { key: made.key, domain: "example.com" }))).toEqual({ ok: 4 });
    // The per-source window clears with the minute.
    await advance(gw, 60);
    expect((await from(ATTACKER, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    // And it can be switched off again.
    await patchKey(gw, made.id, { rate_per_source_per_minute: null });
    expect(await burst(6, () => from(ATTACKER, { key: made.key, domain: "example.com" }))).toEqual({ ok: 6 });
  });

  it("refuses a per-source limit that is not a whole number of at least 1", async () => {
    const made = await clientSetup(gw);
    for (const bad of [0, 1.5, "4"]) {
      const answer = await gw.admin("PATCH", `/keys/${made.id}`, { rate_per_source_per_minute: bad });
      expect(answer.status).toBe(400);
      expect(answer.body.reason).toBe("bad_rate_per_source_per_minute");
    }
  });
});
