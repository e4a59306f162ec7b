import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_DIFFICULTY, proofBits } from "../../../shared/botcheck/proof.js";
import { solveWork } from "../../../shared/botcheck/work.js";
import { postFrom } from "../../helpers/from-address.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { answerOf, BROWSER_HEADERS, botcheckCall, botcheckKey, challenge, HAND, TEST_DIFFICULTY } from "./botcheck-fixtures.js";
import { usageTally } from "./content-fixtures.js";
import { advance, clientSetup } from "./verify-fixtures.js";

/**
 * The hold's proof (shared/botcheck/README.md, docs/security.md "The hold's proof"): a grant
 * must carry a proof-of-work bound to its nonce, from the visitor the challenge was issued
 * to, with headers that pass the assessment, and evidence that sets how much work is due.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("botcheck-proof");
});
afterAll(async () => {
  await gw?.stop();
});

const D = TEST_DIFFICULTY;

/** A counter that reaches `bits` for the nonce but not `below` (so it proves exactly that much). */
function proofBetween(nonce: string, bits: number, below: number): number {
  for (let c = solveWork(nonce, bits); ; c = solveWork(nonce, bits, c + 1)) if (proofBits(nonce, c) < below) return c;
}

const grant = (key: string, nonce: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
  botcheckCall(gw, { key, action: "grant", nonce, held_ms: 1600, ...extra }, headers);

describe("a script that waits the hold", () => {
  it("assess with a browser's headers, wait hold_ms, grant with held_ms and no proof: refused hold_too_short", async () => {
    // A key as an operator makes it: the default difficulty.
    const made = await clientSetup(gw, { botcheck: { enabled: true, hold_ms: 1500 } });
    const assessed = await botcheckCall(gw, { key: made.key, signals: {} });
    const nonce = assessed.body.nonce as string;
    await advance(gw, 2);
    const refused = await grant(made.key, nonce);
    expect(refused.body).toEqual({ ok: false, enforced: true, allow: false, reason: "hold_too_short", ts: expect.any(Number) });
    expect(refused.status).toBe(403);
    // The challenge said what work was due.
    expect(assessed.body.config).toMatchObject({
      hold_ms: 1500,
      difficulty: DEFAULT_DIFFICULTY,
      difficulty_without_evidence: DEFAULT_DIFFICULTY + 2,
    });
    // A human-looking summary does not stand in for the work.
    const again = await challenge(gw, made);
    await advance(gw, 2);
    expect((await grant(made.key, again, { interaction: HAND })).body.reason).toBe("hold_too_short");
    // With the work done, the same script gets its token: the proof is a cost, printed by ops/bench/botcheck-work.ts.
    const paid = await challenge(gw, made);
    await advance(gw, 2);
    const proof = solveWork(paid, DEFAULT_DIFFICULTY);
    const granted = await grant(made.key, paid, { proof, interaction: HAND });
    expect(granted.body.token, JSON.stringify(granted.body)).toEqual(expect.any(String));
  });
});

describe("the proof", () => {
  it("is bound to its nonce: a proof made for another nonce is refused", async () => {
    const made = await botcheckKey(gw);
    const mine = await challenge(gw, made);
    const other = await challenge(gw, made);
    await advance(gw, 2);
    // The other nonce's proof, checked to be no proof for this one.
    let theirs = solveWork(other, D + 2);
    while (proofBits(mine, theirs) >= D) theirs = solveWork(other, D + 2, theirs + 1);
    const refused = await grant(made.key, mine, { proof: theirs, interaction: HAND });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("hold_too_short");
    expect(refused.body).not.toHaveProperty("token");
  });

  it("is single use: replayed with its nonce it is refused, the nonce was spent by the first grant", async () => {
    const made = await botcheckKey(gw);
    const nonce = await challenge(gw, made);
    await advance(gw, 2);
    const answer = answerOf(nonce);
    expect((await grant(made.key, nonce, answer)).body.token).toEqual(expect.any(String));
    const replay = await grant(made.key, nonce, answer);
    expect(replay.status).toBe(403);
    expect(replay.body.reason).toBe("expired_challenge");
    // A failed grant spends it too: no second try with a better proof.
    const tried = await challenge(gw, made);
    await advance(gw, 2);
    expect((await grant(made.key, tried, { interaction: HAND })).body.reason).toBe("hold_too_short");
    expect((await grant(made.key, tried, answerOf(tried))).body.reason).toBe("expired_challenge");
  });

  it("is read from a form too (digits), and anything but a 32-bit counter is no proof", async () => {
    const made = await botcheckKey(gw);
    for (const proof of ["-1", "1e3", "4294967296", "0x1f", "", "abc"]) {
      const nonce = await challenge(gw, made);
      await advance(gw, 2);
      const form = { key: made.key, action: "grant", nonce, held_ms: "1600", proof, interaction: JSON.stringify(HAND) };
      const refused = await gw.call("/api/v1/botcheck.php", { method: "POST", form, headers: { ...BROWSER_HEADERS } });
      expect(refused.body.reason, proof).toBe("hold_too_short");
    }
  });
});

describe("the grant is assessed again", () => {
  it("refuses a grant from another user agent or another network than the assess with invalid_challenge; the same /24 passes", async () => {
    const made = await botcheckKey(gw);
    const ua = await challenge(gw, made);
    await advance(gw, 2);
    const otherUa = { ...BROWSER_HEADERS, "user-agent": BROWSER_HEADERS["user-agent"].replace("Chrome/126.0.0.0", "Chrome/126.0.0.1") };
    const changed = await grant(made.key, ua, answerOf(ua), otherUa);
    expect(changed.status).toBe(403);
    expect(changed.body).toEqual({ ok: false, enforced: true, allow: false, reason: "invalid_challenge", ts: expect.any(Number) });
    // The assess came from 127.0.0.1: another /24 is another visitor, the same /24 the same one.
    const from = async (address: string) => {
      const nonce = await challenge(gw, made);
      await advance(gw, 2);
      return postFrom(
        gw.url,
        address,
        "/api/v1/botcheck.php",
        { key: made.key, action: "grant", nonce, held_ms: 1600, ...answerOf(nonce) },
        { ...BROWSER_HEADERS },
      );
    };
    const elsewhere = await from("127.0.1.1");
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.reason).toBe("invalid_challenge");
    const nearby = await from("127.0.0.9");
    expect(nearby.body.token, JSON.stringify(nearby.body)).toEqual(expect.any(String));
  });

  it("refuses a grant whose own headers a decisive rule refuses, with that rule's reason", async () => {
    const made = await botcheckKey(gw);
    const cases: [Record<string, string>, string][] = [
      [{ ...BROWSER_HEADERS, "user-agent": "python-requests/2.31" }, "bot_ua"],
      [{ ...BROWSER_HEADERS, "user-agent": BROWSER_HEADERS["user-agent"].replace("Chrome/", "HeadlessChrome/") }, "headless"],
      [{ ...BROWSER_HEADERS, accept: "", "accept-language": "" }, "missing_headers"],
    ];
    for (const [headers, reason] of cases) {
      const nonce = await challenge(gw, made);
      await advance(gw, 2);
      const refused = await grant(made.key, nonce, answerOf(nonce), headers);
      expect(refused.status, reason).toBe(403);
      expect(refused.body.reason).toBe(reason);
      expect(refused.body).not.toHaveProperty("token");
    }
  });
});

describe("interaction evidence sets the work", () => {
  it("without evidence (keyboard, none, machine-like) the proof must reach two bits more, and then passes", async () => {
    const made = await botcheckKey(gw);
    const keyboard = { ...HAND, input: "keyboard", keys: 2 };
    const straight = { ...HAND, span_px: HAND.path_px };
    for (const interaction of [keyboard, straight, undefined, "not json"]) {
      const short = await challenge(gw, made);
      await advance(gw, 2);
      const refused = await grant(made.key, short, { proof: proofBetween(short, D, D + 2), interaction });
      expect(refused.body.reason, JSON.stringify(interaction)).toBe("hold_too_short");
      const enough = await challenge(gw, made);
      await advance(gw, 2);
      const passed = await grant(made.key, enough, { proof: solveWork(enough, D + 2), interaction });
      expect(passed.body.token, JSON.stringify(interaction)).toEqual(expect.any(String));
    }
    // The hand's evidence: the key's own difficulty is enough.
    const hand = await challenge(gw, made);
    await advance(gw, 2);
    expect((await grant(made.key, hand, { proof: proofBetween(hand, D, D + 2), interaction: HAND })).body.token).toEqual(
      expect.any(String),
    );
  });

  it("refuses evidence no widget produces with automation, counted under that reason", async () => {
    const made = await botcheckKey(gw, { blocked_url: "https://example.com/blocked" });
    const forged = [
      { ...HAND, presses: 0 },
      { ...HAND, input: "keyboard", keys: 0 },
      { ...HAND, trail: 30, moves: 3 },
      { ...HAND, span_px: 999 },
    ];
    for (const interaction of forged) {
      const nonce = await challenge(gw, made);
      await advance(gw, 2);
      const refused = await grant(made.key, nonce, { proof: solveWork(nonce, D + 2), interaction });
      expect(refused.status).toBe(403);
      expect(refused.body, JSON.stringify(interaction)).toMatchObject({ reason: "automation", blocked_url: "https://example.com/blocked" });
    }
    expect((await usageTally(gw, made.orgId, made.id))["botcheck/automation/1"]).toBe(forged.length);
  });

  it("a key with difficulty 0 asks for no proof and judges no evidence (the grant as the contract states it)", async () => {
    const made = await botcheckKey(gw, { difficulty: 0 });
    const nonce = await challenge(gw, made);
    await advance(gw, 2);
    const granted = await grant(made.key, nonce, { interaction: { ...HAND, presses: 0 } });
    expect(granted.body.token).toEqual(expect.any(String));
    // The hold and the visitor are still checked.
    const short = await challenge(gw, made);
    await advance(gw, 2);
    expect((await grant(made.key, short, { held_ms: 100 })).body.reason).toBe("hold_too_short");
  });
});
