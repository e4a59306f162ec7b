import { randomBytes } from "node:crypto";
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
}

/** 16 random bytes as 32 lower-case hex characters. */
export function createNonce(random: (size: number) => Buffer = randomBytes): string {
  return random(NONCE_BYTES).toString("hex");
}

/** Check a nonce's shape before looking it up: a malformed one is `invalid_challenge`. */
export function isNonce(value: unknown): value is string {
  return typeof value === "string" && NONCE_SHAPE.test(value);
}

export function challengeRecord(issue: { keyId: string | number; nowMs: number; userAgent: string }): ChallengeRecord {
  return { keyId: String(issue.keyId), issuedAtMs: issue.nowMs, uaHash: uaHash(issue.userAgent) };
}

export function serializeChallenge(record: ChallengeRecord): string {
  return JSON.stringify({ keyId: record.keyId, issuedAtMs: record.issuedAtMs, uaHash: record.uaHash });
}

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
  const { keyId, issuedAtMs, uaHash: hash } = value as Record<string, unknown>;
  if (typeof keyId !== "string" || typeof hash !== "string" || typeof issuedAtMs !== "number" || !Number.isFinite(issuedAtMs)) {
    return null;
  }
  return { keyId, issuedAtMs, uaHash: hash };
}

/**
 * Judges a grant against the record the route consumed (GETDEL, so each nonce gets one
 * attempt whatever the outcome). In order:
 * - no record → `expired_challenge`: expired, already used or never issued look the
 *   same in Redis, and the visitor's remedy is the same: ask for a new challenge;
 * - record of another key or another user agent → `invalid_challenge`;
 * - issued CHALLENGE_TTL_MS or more ago → `expired_challenge`;
 * - `held_ms` below the hold time, or less time than the hold time passed since the
 *   challenge was issued (a client cannot have held longer than that) → `hold_too_short`;
 * - otherwise ok.
 */
export function evaluateGrant(record: ChallengeRecord | null, attempt: GrantAttempt): GrantDecision {
  if (record === null) return { ok: false, reason: "expired_challenge" };
  if (record.keyId !== String(attempt.keyId) || record.uaHash !== attempt.uaHash) {
    return { ok: false, reason: "invalid_challenge" };
  }
  const ageMs = attempt.nowMs - record.issuedAtMs;
  if (ageMs >= CHALLENGE_TTL_MS) return { ok: false, reason: "expired_challenge" };
  const held = attempt.heldMs;
  if (held === undefined || !(held >= attempt.holdMs) || ageMs < attempt.holdMs) {
    return { ok: false, reason: "hold_too_short" };
  }
  return { ok: true };
}
