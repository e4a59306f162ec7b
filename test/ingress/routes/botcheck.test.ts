import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postFrom } from "../../helpers/from-address.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import {
  answerOf,
  BROWSER_HEADERS,
  BROWSER_SIGNALS,
  botcheckCall,
  botcheckKey,
  challenge,
  PHONE_HEADERS,
  PHONE_SIGNALS,
  TEST_DIFFICULTY,
} from "./botcheck-fixtures.js";
import { usageTally } from "./content-fixtures.js";
import { advance, clientSetup, usedOf } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("botcheck");
});
afterAll(async () => {
  await gw?.stop();
});

describe("feature off", () => {
  it("answers exactly {enforced:false, allow:true} and nothing else (no ts), even to a bot, with CORS", async () => {
    const made = await clientSetup(gw);
    for (const headers of [BROWSER_HEADERS, { ...BROWSER_HEADERS, "user-agent": "curl/8.5.0" }]) {
      for (const params of [{ key: made.key }, { key: made.key, action: "grant", nonce: "0".repeat(32), held_ms: 0 }]) {
        const answer = await botcheckCall(gw, params, headers);
        expect(answer.status).toBe(200);
        expect(answer.body).toStrictEqual({ enforced: false, allow: true });
        expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      }
    }
    // The key's own rules still apply: a copied page is refused.
    const copied = await botcheckCall(gw, { key: made.key }, { ...BROWSER_HEADERS, origin: "https://copy.example.net" });
    expect(copied.status).toBe(403);
    expect(copied.body).toMatchObject({ ok: false, enforced: true, allow: false, reason: "domain_mismatch" });
  });
});

describe("assess", () => {
  it("challenges a real browser without a token: nonce stored for two minutes, config of the key", async () => {
    const made = await botcheckKey(gw, { hold_ms: 2500, allow_tablet: false });
    const answer = await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      enforced: true,
      allow: false,
      challenge: true,
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      config: {
        hold_ms: 2500,
        allow_desktop: true,
        allow_tablet: false,
        allow_mobile: true,
        difficulty: TEST_DIFFICULTY,
        difficulty_without_evidence: TEST_DIFFICULTY + 2,
      },
      ts: expect.any(Number),
    });
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    const ttl = await gw.ctx.redis.ttl(gw.ctx.keys.challenge(answer.body.nonce));
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    const again = await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS });
    expect(again.body.nonce).not.toBe(answer.body.nonce);
  });

  it("speaks both vocabularies, on GET and POST (JSON and form), under botcheck.php and botcheck", async () => {
    const made = await botcheckKey(gw);
    const signals = JSON.stringify(BROWSER_SIGNALS);
    const headers = { ...BROWSER_HEADERS };
    const answers = [
      await gw.call("/api/v1/botcheck.php", { method: "POST", body: { key: made.key, signals: BROWSER_SIGNALS }, headers }),
      await gw.call("/api/v1/botcheck.php", {
        method: "POST",
        body: { key: made.key, action: "assess", signals: BROWSER_SIGNALS },
        headers,
      }),
      await gw.call("/api/v1/botcheck.php", { method: "POST", form: { key: made.key, action: "check", signals }, headers }),
      await gw.call("/api/v1/botcheck", { query: { key: made.key, action: "check", signals }, headers }),
    ];
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.challenge).toBe(true);
    }
    const grants = [];
    for (const [path, action] of [
      ["/api/v1/botcheck.php", "grant"],
      ["/api/v1/botcheck", "solve"],
    ] as const) {
      const nonce = await challenge(gw, made);
      await advance(gw, 2);
      // Form encoding: the proof as digits, the evidence as a JSON string.
      const { proof, interaction } = answerOf(nonce);
      const form = { key: made.key, action, nonce, held_ms: "1600", proof: String(proof), interaction: JSON.stringify(interaction) };
      grants.push(await gw.call(path, { method: "POST", form, headers }));
    }
    for (const g of grants) {
      expect(g.status, JSON.stringify(g.body)).toBe(200);
      expect(g.body).toEqual({ enforced: true, allow: true, token: expect.any(String), ts: expect.any(Number) });
    }
    const unknown = await botcheckCall(gw, { key: made.key, action: "verify" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.reason).toBe("bad_request");
    const preflight = await gw.call("/api/v1/botcheck.php", { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("refuses clear bots with their reason (403, ok:false), and blocked_url when the key has one", async () => {
    const plain = await botcheckKey(gw);
    const blocked = await botcheckKey(gw, { blocked_url: "https://example.com/blocked" });
    const cases: [Record<string, string>, unknown, string][] = [
      [{ ...BROWSER_HEADERS, "user-agent": "curl/8.5.0" }, BROWSER_SIGNALS, "bot_ua"],
      [
        { ...BROWSER_HEADERS, "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" },
        undefined,
        "bot_ua",
      ],
      [
        { ...BROWSER_HEADERS, "user-agent": BROWSER_HEADERS["user-agent"].replace("Chrome/", "HeadlessChrome/") },
        BROWSER_SIGNALS,
        "headless",
      ],
      [BROWSER_HEADERS, { ...BROWSER_SIGNALS, webdriver: true }, "automation"],
      [{ ...BROWSER_HEADERS, accept: "", "accept-language": "" }, BROWSER_SIGNALS, "missing_headers"],
    ];
    for (const [headers, signals, reason] of cases) {
      const params = signals === undefined ? {} : { signals };
      const refused = await botcheckCall(gw, { key: plain.key, ...params }, headers);
      expect(refused.status, reason).toBe(403);
      expect(refused.body).toEqual({ ok: false, enforced: true, allow: false, reason, ts: expect.any(Number) });
      expect(refused.headers.get("access-control-allow-origin")).toBe("*");
      const withUrl = await botcheckCall(gw, { key: blocked.key, ...params }, headers);
      expect(withUrl.body).toMatchObject({ reason, blocked_url: "https://example.com/blocked" });
    }
  });

  it("refuses a device class the key switched off", async () => {
    const made = await botcheckKey(gw, { allow_mobile: false });
    const phone = await botcheckCall(gw, { key: made.key, signals: PHONE_SIGNALS }, PHONE_HEADERS);
    expect(phone.status).toBe(403);
    expect(phone.body).toMatchObject({ allow: false, reason: "device_not_allowed" });
    expect((await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS })).body.challenge).toBe(true);
    const phoneOk = await botcheckKey(gw);
    expect((await botcheckCall(gw, { key: phoneOk.key, signals: PHONE_SIGNALS }, PHONE_HEADERS)).body.challenge).toBe(true);
  });
});

describe("challenge, grant and token", () => {
  it("challenge → grant → token; later assessments with the token are verified", async () => {
    const made = await botcheckKey(gw, { hold_ms: 1500 });
    const nonce = await challenge(gw, made);
    await advance(gw, 2);
    const granted = await botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600, ...answerOf(nonce) });
    expect(granted.status).toBe(200);
    const token = granted.body.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    for (let i = 0; i < 2; i++) {
      const back = await botcheckCall(gw, { key: made.key, token, signals: BROWSER_SIGNALS });
      expect(back.status).toBe(200);
      expect(back.body).toEqual({ enforced: true, allow: true, verified: true, ts: expect.any(Number) });
    }
    // The token is bound to the browser and the key: another UA or key is challenged again.
    const otherUa = { ...BROWSER_HEADERS, "user-agent": BROWSER_HEADERS["user-agent"].replace("126.0.0.0", "126.0.0.1") };
    expect((await botcheckCall(gw, { key: made.key, token, signals: BROWSER_SIGNALS }, otherUa)).body.challenge).toBe(true);
    const other = await botcheckKey(gw);
    expect((await botcheckCall(gw, { key: other.key, token, signals: BROWSER_SIGNALS })).body.challenge).toBe(true);
    // ... and to the visitor's /24 (docs/security.md, item 9): the same /24 passes, another is challenged.
    const from = (address: string) =>
      postFrom(gw.url, address, "/api/v1/botcheck.php", { key: made.key, token, signals: BROWSER_SIGNALS }, { ...BROWSER_HEADERS });
    expect((await from("127.0.0.9")).body.verified).toBe(true);
    expect((await from("127.0.1.1")).body.challenge).toBe(true);
    // A token never lets a clear bot through.
    const bot = await botcheckCall(gw, { key: made.key, token }, { ...BROWSER_HEADERS, "user-agent": "python-requests/2.31" });
    expect(bot.body.reason).toBe("bot_ua");
  });

  it("a nonce is consumed once: a replay is refused", async () => {
    const made = await botcheckKey(gw);
    const nonce = await challenge(gw, made);
    await advance(gw, 2);
    const answer = answerOf(nonce);
    const first = await botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600, ...answer });
    expect(first.body.token).toEqual(expect.any(String));
    const replay = await botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600, ...answer });
    expect(replay.status).toBe(403);
    expect(replay.body).toMatchObject({ ok: false, allow: false, reason: "expired_challenge" });
    expect(replay.body).not.toHaveProperty("token");
    expect(await gw.ctx.redis.exists(gw.ctx.keys.challenge(nonce))).toBe(0);
  });

  it("concurrent grants of one nonce: exactly one token", async () => {
    const made = await botcheckKey(gw);
    const nonce = await challenge(gw, made);
    await advance(gw, 2);
    const answer = answerOf(nonce);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600, ...answer })),
    );
    expect(answers.filter((a) => typeof a.body.token === "string")).toHaveLength(1);
    expect(answers.filter((a) => a.body.reason === "expired_challenge")).toHaveLength(7);
  });

  it("expires two minutes after it was issued, on the test clock", async () => {
    const made = await botcheckKey(gw);
    const nonce = await challenge(gw, made);
    await advance(gw, 121);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.challenge(nonce))).toBe(1); // Redis still holds it: the clock decides.
    const late = await botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600, ...answerOf(nonce) });
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ ok: false, enforced: true, allow: false, reason: "expired_challenge" });
  });

  it("refuses a hold below the key's hold time, or shorter than the time since the challenge", async () => {
    const made = await botcheckKey(gw, { hold_ms: 3000, blocked_url: "https://example.com/blocked" });
    const short = await challenge(gw, made);
    await advance(gw, 4);
    const held = await botcheckCall(gw, { key: made.key, action: "grant", nonce: short, held_ms: 2999, ...answerOf(short) });
    expect(held.status).toBe(403);
    // A failed challenge is retried, so the key's blocked page is not offered.
    expect(held.body).toEqual({ ok: false, enforced: true, allow: false, reason: "hold_too_short", ts: expect.any(Number) });
    const missing = await challenge(gw, made);
    await advance(gw, 4);
    expect((await botcheckCall(gw, { key: made.key, action: "grant", nonce: missing, ...answerOf(missing) })).body.reason).toBe(
      "hold_too_short",
    );
    const tooSoon = await challenge(gw, made);
    expect(
      (await botcheckCall(gw, { key: made.key, action: "grant", nonce: tooSoon, held_ms: 3500, ...answerOf(tooSoon) })).body.reason,
    ).toBe("hold_too_short");
  });

  it("refuses a malformed nonce, and one issued to another key or browser, with invalid_challenge", async () => {
    const made = await botcheckKey(gw);
    const other = await botcheckKey(gw);
    for (const nonce of [undefined, "", "xyz", "A".repeat(32), { a: 1 }]) {
      const refused = await botcheckCall(gw, { key: made.key, action: "grant", nonce, held_ms: 1600 });
      expect(refused.status, JSON.stringify(nonce)).toBe(403);
      expect(refused.body.reason).toBe("invalid_challenge");
    }
    const foreign = await challenge(gw, other);
    await advance(gw, 2);
    expect(
      (await botcheckCall(gw, { key: made.key, action: "grant", nonce: foreign, held_ms: 1600, ...answerOf(foreign) })).body.reason,
    ).toBe("invalid_challenge");
    const mine = await challenge(gw, made);
    await advance(gw, 2);
    const otherBrowser = { ...BROWSER_HEADERS, "user-agent": `${BROWSER_HEADERS["user-agent"]} Edg/126.0.0.0` };
    expect(
      (await botcheckCall(gw, { key: made.key, action: "grant", nonce: mine, held_ms: 1600, ...answerOf(mine) }, otherBrowser)).body.reason,
    ).toBe("invalid_challenge");
  });
});

describe("the key and the page", () => {
  it("locks the key to the page's domain from Origin, else Referer; the domain parameter does not count", async () => {
    const made = await botcheckKey(gw);
    const cases: [Record<string, string>, Record<string, unknown>, string][] = [
      [{ ...BROWSER_HEADERS, origin: "https://evil.example.net" }, {}, "domain_mismatch"],
      [{ ...BROWSER_HEADERS, origin: "https://evil.example.net" }, { domain: "example.com" }, "domain_mismatch"],
      [{ ...BROWSER_HEADERS, origin: "null" }, {}, "domain_mismatch"],
      [(({ origin, referer, ...rest }) => rest)(BROWSER_HEADERS), { domain: "example.com" }, "domain_mismatch"],
      [(({ origin, ...rest }) => ({ ...rest, referer: "https://evil.example.net/example.com" }))(BROWSER_HEADERS), {}, "domain_mismatch"],
    ];
    for (const [headers, extra, reason] of cases) {
      const refused = await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS, ...extra }, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.body).toMatchObject({ ok: false, enforced: true, allow: false, reason });
    }
    const subdomain = await botcheckCall(
      gw,
      { key: made.key, signals: BROWSER_SIGNALS },
      { ...BROWSER_HEADERS, origin: "https://shop.example.com:8443" },
    );
    expect(subdomain.body.challenge).toBe(true);
    const refererOnly = (({ origin, ...rest }) => ({ ...rest, referer: "https://www.example.com/checkout?step=2" }))(BROWSER_HEADERS);
    expect((await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS }, refererOnly)).body.challenge).toBe(true);
  });

  it("refuses an unknown key with invalid_key and a missing one with missing_key", async () => {
    const unknown = await botcheckCall(gw, { key: "ak_live_doesnotexist0000000000000000" });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ ok: false, enforced: true, allow: false, reason: "invalid_key", ts: expect.any(Number) });
    expect(unknown.headers.get("access-control-allow-origin")).toBe("*");
    const missing = await botcheckCall(gw, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ ok: false, allow: false, reason: "missing_key" });
  });

  it("carries blocked_url on the key's refusals too, and the chain's reasons with ok:false", async () => {
    const made = await botcheckKey(gw, { blocked_url: "https://example.com/blocked" });
    await gw.admin("POST", `/keys/${made.id}/suspend`);
    const suspended = await botcheckCall(gw, { key: made.key });
    expect(suspended.status).toBe(403);
    expect(suspended.body).toMatchObject({ ok: false, allow: false, reason: "key_suspended", blocked_url: "https://example.com/blocked" });
  });
});

describe("counting", () => {
  it("counts every answered call, bot refusals included, under the endpoint label botcheck", async () => {
    const made = await botcheckKey(gw);
    const before = await usedOf(gw, made.orgId);
    await challenge(gw, made);
    await botcheckCall(gw, { key: made.key }, { ...BROWSER_HEADERS, "user-agent": "curl/8.5.0" });
    await botcheckCall(gw, { key: made.key, action: "grant", nonce: "f".repeat(32), held_ms: 2000 });
    await botcheckCall(gw, { key: made.key }, { ...BROWSER_HEADERS, origin: "https://evil.example.net" });
    expect(await usedOf(gw, made.orgId)).toBe(before + 4);
    expect(await usageTally(gw, made.orgId, made.id)).toEqual({
      "botcheck/ok/1": 1,
      "botcheck/bot_ua/1": 1,
      "botcheck/expired_challenge/1": 1,
      "botcheck/domain_mismatch/1": 1,
    });
  });

  it("rate-limits like verify: past rate_per_minute a call is rate_limited and not counted", async () => {
    const made = await botcheckKey(gw, {}, { rate_per_minute: 2 });
    await challenge(gw, made);
    // A bot's refusal takes its slot of the key's refusal window, not of the visitors' (docs/security.md, item 1).
    const bot = await botcheckCall(gw, { key: made.key }, { ...BROWSER_HEADERS, "user-agent": "curl/8.5.0" });
    expect(bot.body.reason).toBe("bot_ua");
    await challenge(gw, made);
    const limited = await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ ok: false, allow: false, reason: "rate_limited" });
    expect(limited.body).not.toHaveProperty("nonce");
    expect(await usedOf(gw, made.orgId)).toBe(3);
  });
});
