import { describe, expect, it } from "vitest";
import { challengeAnswer, disabledAnswer, grantedAnswer, refusedAnswer, verifiedAnswer } from "../../../shared/botcheck/answer.js";
import { ALL_DEVICES } from "./fixtures.js";

describe("bot-check answers", () => {
  it("is exactly {enforced:false, allow:true} when the feature is off", () => {
    expect(disabledAnswer()).toStrictEqual({ enforced: false, allow: true });
  });

  it("builds the other answers of interface 2.5", () => {
    expect(verifiedAnswer()).toStrictEqual({ enforced: true, allow: true, verified: true });
    expect(grantedAnswer("t.k")).toStrictEqual({ enforced: true, allow: true, token: "t.k" });
    const work = { difficulty: 18, withoutEvidence: 20 };
    expect(challengeAnswer("ab".repeat(16), { ...ALL_DEVICES, extra: 1 } as typeof ALL_DEVICES, work)).toStrictEqual({
      enforced: true,
      allow: false,
      challenge: true,
      nonce: "ab".repeat(16),
      config: { ...ALL_DEVICES, difficulty: 18, difficulty_without_evidence: 20 },
    });
    expect(refusedAnswer("bot_ua")).toStrictEqual({ enforced: true, allow: false, reason: "bot_ua" });
    expect(refusedAnswer("headless", "https://shop.example/blocked")).toStrictEqual({
      enforced: true,
      allow: false,
      reason: "headless",
      blocked_url: "https://shop.example/blocked",
    });
  });
});
