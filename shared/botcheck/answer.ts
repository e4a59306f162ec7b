import type { BotcheckConfig } from "./evidence.js";
import type { BotcheckReason } from "./reasons.js";

/** The bot-check answers of interface 2.5, before the route adds `ts`. */
export type DisabledAnswer = { enforced: false; allow: true };
export type VerifiedAnswer = { enforced: true; allow: true; verified: true };
export type GrantedAnswer = { enforced: true; allow: true; token: string };
/** `config` of a challenge: the key's settings of interface 2.5, plus the proof's difficulties (added fields). */
export type ChallengeConfig = BotcheckConfig & { difficulty: number; difficulty_without_evidence: number };
export type ChallengeAnswer = { enforced: true; allow: false; challenge: true; nonce: string; config: ChallengeConfig };
export type RefusedAnswer = { enforced: true; allow: false; reason: BotcheckReason; blocked_url?: string };
export type BotcheckAnswer = DisabledAnswer | VerifiedAnswer | GrantedAnswer | ChallengeAnswer | RefusedAnswer;

/** Bot protection off for the key: exactly this, nothing else. */
export function disabledAnswer(): DisabledAnswer {
  return { enforced: false, allow: true };
}

export function verifiedAnswer(): VerifiedAnswer {
  return { enforced: true, allow: true, verified: true };
}

export function grantedAnswer(token: string): GrantedAnswer {
  return { enforced: true, allow: true, token };
}

/** `work`: the difficulties stored with the nonce (proof.ts `difficulties`). */
export function challengeAnswer(
  nonce: string,
  config: BotcheckConfig,
  work: { difficulty: number; withoutEvidence: number },
): ChallengeAnswer {
  const { hold_ms, allow_desktop, allow_tablet, allow_mobile } = config;
  return {
    enforced: true,
    allow: false,
    challenge: true,
    nonce,
    config: {
      hold_ms,
      allow_desktop,
      allow_tablet,
      allow_mobile,
      difficulty: work.difficulty,
      difficulty_without_evidence: work.withoutEvidence,
    },
  };
}

/** `blockedUrl`: the key's `blocked_url` setting, sent only when set. */
export function refusedAnswer(reason: BotcheckReason, blockedUrl?: string | null): RefusedAnswer {
  return blockedUrl ? { enforced: true, allow: false, reason, blocked_url: blockedUrl } : { enforced: true, allow: false, reason };
}
