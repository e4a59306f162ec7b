export {
  type BotcheckAnswer,
  type ChallengeAnswer,
  challengeAnswer,
  type ChallengeConfig,
  type DisabledAnswer,
  disabledAnswer,
  type GrantedAnswer,
  grantedAnswer,
  type RefusedAnswer,
  refusedAnswer,
  type VerifiedAnswer,
  verifiedAnswer,
} from "./answer.js";
export { type Assessment, assess, type Clue, type Verdict } from "./assess.js";
export { type DeviceClass, deviceClass, effectiveDeviceClass } from "./device.js";
export type { AssessInput, BotcheckConfig } from "./evidence.js";
export {
  CHALLENGE_TTL_MS,
  CHALLENGE_TTL_S,
  type ChallengeIssue,
  type ChallengeRecord,
  challengeRecord,
  createNonce,
  evaluateGrant,
  type GrantAttempt,
  type GrantDecision,
  isNonce,
  parseChallenge,
  serializeChallenge,
} from "./nonce.js";
export { type AssessReason, BOTCHECK_REASONS, type BotcheckReason, type GrantReason } from "./reasons.js";
export { ALLOW_BELOW, DECISIVE, REFUSE_AT, RULES, type Rule } from "./rules.js";
export {
  createInteractionParser,
  createSignalsParser,
  interactionSchema,
  type Signals,
  type SignalsParse,
  signalsSchema,
} from "./signals.js";
export { type Interaction, type InteractionVerdict, judgeInteraction } from "./interaction.js";
export { DEFAULT_DIFFICULTY, difficulties, MAX_DIFFICULTY, NO_EVIDENCE_EXTRA_BITS, parseProof, proofBits } from "./proof.js";
export { solveWork, WORK_MAX_COUNTER, workSearcher } from "./work.js";
export { networkHash, visitorNetwork } from "./network.js";
export { issueToken, TOKEN_SECRET_MIN_BYTES, TOKEN_TTL_S, type TokenCheck, type TokenIssue, verifyToken } from "./token.js";
export { uaHash } from "./ua-hash.js";
