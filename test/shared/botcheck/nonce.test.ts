import { describe, expect, it } from "vitest";
import {
  CHALLENGE_TTL_MS,
  CHALLENGE_TTL_S,
  challengeRecord,
  createNonce,
  evaluateGrant,
  type GrantAttempt,
  isNonce,
  parseChallenge,
  serializeChallenge,
} from "../../../shared/botcheck/nonce.js";
import { networkHash } from "../../../shared/botcheck/network.js";
import { proofBits } from "../../../shared/botcheck/proof.js";
import { uaHash } from "../../../shared/botcheck/ua-hash.js";
import { solveWork } from "../../../shared/botcheck/work.js";
import { UA } from "./fixtures.js";

const issuedAtMs = 1_750_000_000_000;
const ADDRESS = "203.0.113.7";
const NONCE = "ab".repeat(16);
const OTHER_NONCE = "cd".repeat(16);
const work = { difficulty: 8, withoutEvidence: 10 };
const record = challengeRecord({ keyId: 42, nowMs: issuedAtMs, userAgent: UA.chromeWindows, address: ADDRESS, ...work });
const holdMs = 1500;
// Proofs for NONCE: one that reaches 10 bits (so 8 too), one of exactly 8 or 9 bits, one of fewer than 8.
const strong = solveWork(NONCE, 10);
const medium = (() => {
  for (let c = 0; ; c++) if (proofBits(NONCE, c) >= 8 && proofBits(NONCE, c) < 10) return c;
})();
const weak = (() => {
  for (let c = 0; ; c++) if (proofBits(NONCE, c) < 8) return c;
})();
// A proof for another nonce that is no proof for NONCE.
const foreign = (() => {
  for (let c = 0; ; c = solveWork(OTHER_NONCE, 10, c + 1)) if (proofBits(OTHER_NONCE, c) >= 10 && proofBits(NONCE, c) < 8) return c;
})();
const attempt = (changes: Partial<GrantAttempt> = {}): GrantAttempt => ({
  nowMs: issuedAtMs + 5_000,
  heldMs: 1_600,
  holdMs,
  keyId: 42,
  uaHash: uaHash(UA.chromeWindows),
  netHash: networkHash(ADDRESS),
  nonce: NONCE,
  proof: strong,
  interaction: "human",
  ...changes,
});

describe("challenge nonce", () => {
  it("lasts two minutes", () => {
    expect(CHALLENGE_TTL_S).toBe(120);
    expect(CHALLENGE_TTL_MS).toBe(120_000);
  });

  it("draws nonces from the pooled CSPRNG as hex: well formed and never repeated", () => {
    const seen = new Set<string>();
    // Past one 4 KiB fill of the pool, so a refill is crossed.
    for (let i = 0; i < 600; i++) {
      const nonce = createNonce();
      expect(isNonce(nonce)).toBe(true);
      seen.add(nonce);
    }
    expect(seen.size).toBe(600);
  });

  it("is 16 random bytes in hex, from the given source", () => {
    expect(createNonce(() => Buffer.alloc(16, 0xab))).toBe("ab".repeat(16));
    const a = createNonce();
    expect(isNonce(a)).toBe(true);
    expect(createNonce()).not.toBe(a);
  });

  it.each([
    ["too short", "abcd"],
    ["upper case", "AB".repeat(16)],
    ["not hex", "zz".repeat(16)],
    ["a number", 12],
    ["undefined", undefined],
  ])("rejects the shape %s", (_name, value) => {
    expect(isNonce(value)).toBe(false);
  });

  it("stores a JSON record that reads back", () => {
    expect(record).toEqual({
      keyId: "42",
      issuedAtMs,
      uaHash: uaHash(UA.chromeWindows),
      netHash: networkHash(ADDRESS),
      difficulty: 8,
      withoutEvidence: 10,
    });
    expect(JSON.parse(serializeChallenge(record))).toEqual(record);
    expect(parseChallenge(serializeChallenge(record))).toEqual(record);
  });

  it("writes a record as JSON.stringify does, whatever its fields hold", () => {
    const record = challengeRecord({
      keyId: 42,
      nowMs: issuedAtMs,
      userAgent: UA.chromeWindows,
      address: ADDRESS,
      difficulty: 8,
      withoutEvidence: 10,
    });
    const { keyId, uaHash: ua, netHash, difficulty, withoutEvidence } = record;
    expect(serializeChallenge(record)).toBe(JSON.stringify({ keyId, issuedAtMs, uaHash: ua, netHash, difficulty, withoutEvidence }));
    // Fields the hand-written form does not expect take JSON.stringify's way: still valid, same text.
    for (const odd of [
      { ...record, keyId: 'a"b\\c\u2028' },
      { ...record, uaHash: 'AB"CD' },
      { ...record, netHash: "x\n" },
      { ...record, issuedAtMs: 1.5 },
      { ...record, difficulty: Number.NaN },
    ]) {
      const text = serializeChallenge(odd);
      expect(text).toBe(JSON.stringify(odd));
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["not JSON", "{"],
    ["a number", "5"],
    ["missing fields", '{"keyId":"42"}'],
    ["wrong types", '{"keyId":42,"issuedAtMs":"1","uaHash":"x"}'],
    ["a record stored before the proof (no network, no difficulty)", '{"keyId":"42","issuedAtMs":1,"uaHash":"x"}'],
    ["a difficulty out of range", '{"keyId":"42","issuedAtMs":1,"uaHash":"x","netHash":"y","difficulty":33,"withoutEvidence":35}'],
  ])("reads %s as no record", (_name, raw) => {
    expect(parseChallenge(raw)).toBeNull();
  });
});

describe("evaluateGrant", () => {
  const cases: Array<[string, Parameters<typeof evaluateGrant>[0], GrantAttempt, string | null]> = [
    ["a proper grant", record, attempt(), null],
    ["a grant at exactly the hold time", record, attempt({ heldMs: holdMs, nowMs: issuedAtMs + holdMs }), null],
    ["one millisecond before the two minutes are up", record, attempt({ nowMs: issuedAtMs + 119_999 }), null],
    ["a key id given as a string", record, attempt({ keyId: "42" }), null],
    ["no record (expired, used or never issued)", null, attempt(), "expired_challenge"],
    ["at exactly 120 s", record, attempt({ nowMs: issuedAtMs + 120_000 }), "expired_challenge"],
    ["long after", record, attempt({ nowMs: issuedAtMs + 3_600_000 }), "expired_challenge"],
    ["held_ms below the hold time", record, attempt({ heldMs: holdMs - 1 }), "hold_too_short"],
    ["held_ms missing", record, attempt({ heldMs: undefined }), "hold_too_short"],
    ["held_ms not a number", record, attempt({ heldMs: Number.NaN }), "hold_too_short"],
    ["a claimed hold longer than the challenge has existed", record, attempt({ heldMs: 5_000, nowMs: issuedAtMs + 800 }), "hold_too_short"],
    ["another key", record, attempt({ keyId: 43 }), "invalid_challenge"],
    ["another user agent", record, attempt({ uaHash: uaHash(UA.firefoxWindows) }), "invalid_challenge"],
    [
      "another user agent, after expiry",
      record,
      attempt({ uaHash: uaHash(UA.firefoxWindows), nowMs: issuedAtMs + 200_000 }),
      "invalid_challenge",
    ],
    ["another network (another /24)", record, attempt({ netHash: networkHash("203.0.114.7") }), "invalid_challenge"],
    ["another address of the same /24", record, attempt({ netHash: networkHash("203.0.113.200") }), null],
    ["no proof", record, attempt({ proof: undefined }), "hold_too_short"],
    ["a proof short of the difficulty", record, attempt({ proof: weak }), "hold_too_short"],
    ["a proof made for another nonce", record, attempt({ proof: foreign }), "hold_too_short"],
    ["the key's difficulty with human evidence", record, attempt({ proof: medium }), null],
    ["the key's difficulty without evidence", record, attempt({ proof: medium, interaction: "absent" }), "hold_too_short"],
    ["two bits more without evidence", record, attempt({ interaction: "absent" }), null],
    ["evidence the widget cannot produce", record, attempt({ interaction: "forged" }), "automation"],
    ["a short hold before the proof", record, attempt({ heldMs: 10, proof: undefined }), "hold_too_short"],
    [
      "no proof when the key asks none (difficulty 0): evidence not judged",
      { ...record, difficulty: 0, withoutEvidence: 0 },
      attempt({ proof: undefined, interaction: "forged" }),
      null,
    ],
  ];

  it.each(cases)("%s", (_name, stored, grant, reason) => {
    expect(evaluateGrant(stored, grant)).toEqual(reason === null ? { ok: true } : { ok: false, reason });
  });
});
