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
import { uaHash } from "../../../shared/botcheck/ua-hash.js";
import { UA } from "./fixtures.js";

const issuedAtMs = 1_750_000_000_000;
const record = challengeRecord({ keyId: 42, nowMs: issuedAtMs, userAgent: UA.chromeWindows });
const holdMs = 1500;
const attempt = (changes: Partial<GrantAttempt> = {}): GrantAttempt => ({
  nowMs: issuedAtMs + 5_000,
  heldMs: 1_600,
  holdMs,
  keyId: 42,
  uaHash: uaHash(UA.chromeWindows),
  ...changes,
});

describe("challenge nonce", () => {
  it("lasts two minutes", () => {
    expect(CHALLENGE_TTL_S).toBe(120);
    expect(CHALLENGE_TTL_MS).toBe(120_000);
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
    expect(record).toEqual({ keyId: "42", issuedAtMs, uaHash: uaHash(UA.chromeWindows) });
    expect(JSON.parse(serializeChallenge(record))).toEqual(record);
    expect(parseChallenge(serializeChallenge(record))).toEqual(record);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["not JSON", "{"],
    ["a number", "5"],
    ["missing fields", '{"keyId":"42"}'],
    ["wrong types", '{"keyId":42,"issuedAtMs":"1","uaHash":"x"}'],
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
  ];

  it.each(cases)("%s", (_name, stored, grant, reason) => {
    expect(evaluateGrant(stored, grant)).toEqual(reason === null ? { ok: true } : { ok: false, reason });
  });
});
