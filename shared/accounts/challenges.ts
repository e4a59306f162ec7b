import type { Redis } from "../platform/redis/client.js";
import type { Keys } from "../platform/redis/keys.js";
import { LIFETIMES } from "./policy.js";

/**
 * WebAuthn challenges between the options call and the verify call, in Redis. A challenge
 * is bound to what it may prove (a passkey sign-in, an invitation's link, a session adding
 * a passkey) and taken with GETDEL: a verify call consumes it whether it succeeds or not,
 * so an answer is never verified twice. Its end is judged on the shared clock (the Redis
 * TTL only cleans up), so the test clock expires it too.
 */

export type ChallengeBinding = { purpose: "signin" } | { purpose: "invitation"; linkId: number } | { purpose: "add"; sessionId: number };

interface Stored {
  binding: ChallengeBinding;
  expiresAtMs: number;
}

/** What simplewebauthn generates: 32 random bytes, base64url. Anything else never names a key. */
const CHALLENGE_RE = /^[A-Za-z0-9_-]{16,128}$/;

export async function storeChallenge(redis: Redis, keys: Keys, challenge: string, binding: ChallengeBinding, nowMs: number): Promise<void> {
  const stored: Stored = { binding, expiresAtMs: nowMs + LIFETIMES.challengeMs };
  await redis.set(keys.authChallenge(challenge), JSON.stringify(stored), "PX", LIFETIMES.challengeMs);
}

/** The binding of a live challenge, consumed; null for an unknown, spent or expired one. */
export async function takeChallenge(redis: Redis, keys: Keys, challenge: string, nowMs: number): Promise<ChallengeBinding | null> {
  if (!CHALLENGE_RE.test(challenge)) return null;
  const raw = await redis.getdel(keys.authChallenge(challenge));
  if (raw === null) return null;
  const stored = JSON.parse(raw) as Stored;
  return stored.expiresAtMs > nowMs ? stored.binding : null;
}

/** The challenge a browser signed, read from the response's clientDataJSON; null when unreadable. */
export function challengeOf(clientDataJSON: string): string | null {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8"));
    if (data === null || typeof data !== "object") return null;
    const challenge = (data as { challenge?: unknown }).challenge;
    return typeof challenge === "string" ? challenge : null;
  } catch {
    return null;
  }
}
