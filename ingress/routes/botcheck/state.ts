import { createInteractionParser, createSignalsParser, type Interaction, type SignalsParse } from "../../../shared/botcheck/index.js";
import { deriveKey } from "../../../shared/platform/crypto/seal.js";
import type { Redis } from "../../../shared/platform/redis/client.js";
import { type ChallengeWriter, createChallengeWriter } from "./challenges.js";

/**
 * What botcheck.php keeps between calls, built once at ingress start (IngressDeps): the
 * compiled `signals` and `interaction` schemas, the challenges' writer (one pipeline per
 * event-loop turn) and the pass-token secret, derived from the master secret
 * (so every process of a deployment shares it without storing it, and rotating
 * GATEWAY_SECRET ends every outstanding token).
 */
export interface BotcheckState {
  /** `owned`: the value was parsed for this call alone and may be changed (unknown fields dropped in place). */
  parseSignals(raw: unknown, owned?: boolean): SignalsParse;
  /** The grant's `interaction` summary, or undefined when absent or out of its schema. */
  parseInteraction(raw: unknown): Interaction | undefined;
  tokenSecret: Buffer;
  /** Stores a challenge record (SET NX EX), batched per event-loop turn (challenges.ts). */
  writeChallenge: ChallengeWriter;
}

export function createBotcheckState(masterSecret: Buffer, redis: Redis): BotcheckState {
  return {
    parseSignals: createSignalsParser(),
    parseInteraction: createInteractionParser(),
    tokenSecret: deriveKey(masterSecret, "botcheck-token"),
    writeChallenge: createChallengeWriter(redis),
  };
}
