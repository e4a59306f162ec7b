import { pooledRandomHex } from "../platform/crypto/hash.js";
import type { InteractionVerdict } from "./interaction.js";
import { networkHash } from "./network.js";
import { proofBits } from "./proof.js";
import type { GrantReason } from "./reasons.js";
import { uaHash } from "./ua-hash.js";

/** A challenge nonce lasts two minutes (interface 3.4); also the Redis expiry of its record. */
export const CHALLENGE_TTL_S = 120;
export const CHALLENGE_TTL_MS = CHALLENGE_TTL_S * 1000;
export const NONCE_BYTES = 16;

const NONCE_SHAPE = /^[0-9a-f]{32}$/;

/** What the route stores under the nonce (as JSON, with expiry CHALLENGE_TTL_S). */
export interface ChallengeRecord {
  keyId: string;
  /** Unix milliseconds at which the challenge was issued. */
  issuedAtMs: number;
  /** `uaHash` of the visitor's User-Agent. */
  uaHash: string;
  /** `networkHash` of the visitor's address: the /24 or /48 the pass token will be bound to. */
  netHash: string;
  /** Leading zero bits the proof must reach with credible interaction evidence (0: no proof asked). */
  difficulty: number;
  /** ... and without it. */
  withoutEvidence: number;
}

export type GrantDecision = { ok: true } | { ok: false; reason: GrantReason };

export interface GrantAttempt {
  nowMs: number;
  /** `held_ms` as sent; undefined or not a number counts as no hold. */
  heldMs: number | undefined;
  /** The key's hold time. */
  holdMs: number;
  keyId: string | number;
  /** `uaHash` of the User-Agent of the grant request. */
  uaHash: string;
  /** `networkHash` of the grant request's address. */
  netHash: string;
  /** The nonce being answered (the proof is bound to it). */
  nonce: string;
  /** `proof` as parsed (parseProof); undefined is no proof. */
  proof: number | undefined;
  /** `judgeInteraction` of the grant's `interaction`. */
  interaction: InteractionVerdict;
}

/** 16 random bytes as 32 lower-case hex characters. */
export function createNonce(random?: (size: number) => Buffer): string {
  // The CSPRNG's output pooled 4 KiB at a time, read as hex where it lies (no Buffer per nonce).
  return random === undefined ? pooledRandomHex(NONCE_BYTES) : random(NONCE_BYTES).toString("hex");
}

/** Check a nonce's shape before looking it up: a malformed one is `invalid_challenge`. */
export function isNonce(value: unknown): value is string {
  return typeof value === "string" && NONCE_SHAPE.test(value);
}

export interface ChallengeIssue {
  keyId: string | number;
  nowMs: number;
  userAgent: string;
  /** The visitor's address (the request's client address). */
  address: string;
  difficulty: number;
  withoutEvidence: number;
}

export function challengeRecord(issue: ChallengeIssue): ChallengeRecord {
  return {
    keyId: String(issue.keyId),
    issuedAtMs: issue.nowMs,
    uaHash: uaHash(issue.userAgent),
    netHash: networkHash(issue.address),
    difficulty: issue.difficulty,
    withoutEvidence: issue.withoutEvidence,
  };
}

export function serializeChallenge(record: ChallengeRecord): string {
  const { keyId, issuedAtMs, uaHash: ua, netHash, difficulty, withoutEvidence } = record;
  // Written by hand, the same text JSON.stringify gives (0.3 µs against 0.7 with the record
  // made, on every new visitor): the hashes are our own lower-case hex and the numbers whole,
  // so only the key id is escaped. Anything else takes JSON.stringify.
  if (
    Number.isSafeInteger(issuedAtMs) &&
    Number.isSafeInteger(difficulty) &&
    Number.isSafeInteger(withoutEvidence) &&
    HEX.test(ua) &&
    HEX.test(netHash)
  ) {
    return `{"keyId":${JSON.stringify(keyId)},"issuedAtMs":${issuedAtMs},"uaHash":"${ua}","netHash":"${netHash}","difficulty":${difficulty},"withoutEvidence":${withoutEvidence}}`;
  }
  return JSON.stringify({ keyId, issuedAtMs, uaHash: ua, netHash, difficulty, withoutEvidence });
}

const HEX = /^[0-9a-f]*$/;

const isBits = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 32;

/** The stored record, or null when absent or unreadable. */
export function parseChallenge(raw: string | null | undefined): ChallengeRecord | null {
  if (typeof raw !== "string") return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { keyId, issuedAtMs, uaHash: hash, netHash, difficulty, withoutEvidence } = value as Record<string, unknown>;
  if (typeof keyId !== "string" || typeof hash !== "string" || typeof issuedAtMs !== "number" || !Number.isFinite(issuedAtMs)) {
    return null;
  }
  // A record stored before the proof existed reads as none: the visitor asks again.
  if (typeof netHash !== "string" || !isBits(difficulty) || !isBits(withoutEvidence)) return null;
  return { keyId, issuedAtMs, uaHash: hash, netHash, difficulty, withoutEvidence };
}

/**
 * Judges a grant against the record the route consumed (GETDEL, so each nonce gets one
 * attempt whatever the outcome). In order:
 * - no record → `expired_challenge`: expired, already used or never issued look the
 *   same in Redis, and the visitor's remedy is the same: ask for a new challenge;
 * - record of another key, another user agent or another network (the grant is not the
 *   visitor the challenge was issued to) → `invalid_challenge`;
 * - issued CHALLENGE_TTL_MS or more ago → `expired_challenge`;
 * - `held_ms` below the hold time, or less time than the hold time passed since the
 *   challenge was issued (a client cannot have held longer than that) → `hold_too_short`;
 * - when the challenge asked for a proof (difficulty > 0): interaction evidence the widget
 *   cannot produce → `automation`; a proof missing, or short of the difficulty the
 *   evidence calls for (a proof for another nonce is short of it) → `hold_too_short`:
 *   the proof is how the service knows the hold happened, and the remedy is the same;
 * - otherwise ok.
 */
export function evaluateGrant(record: ChallengeRecord | null, attempt: GrantAttempt): GrantDecision {
  if (record === null) return { ok: false, reason: "expired_challenge" };
  if (record.keyId !== String(attempt.keyId) || record.uaHash !== attempt.uaHash || record.netHash !== attempt.netHash) {
    return { ok: false, reason: "invalid_challenge" };
  }
  const ageMs = attempt.nowMs - record.issuedAtMs;
  if (ageMs >= CHALLENGE_TTL_MS) return { ok: false, reason: "expired_challenge" };
  const held = attempt.heldMs;
  if (held === undefined || !(held >= attempt.holdMs) || ageMs < attempt.holdMs) {
    return { ok: false, reason: "hold_too_short" };
  }
  if (record.difficulty === 0) return { ok: true };
  if (attempt.interaction === "forged") return { ok: false, reason: "automation" };
  const needed = attempt.interaction === "human" ? record.difficulty : record.withoutEvidence;
  if (attempt.proof === undefined || proofBits(attempt.nonce, attempt.proof) < needed) return { ok: false, reason: "hold_too_short" };
  return { ok: true };
}
