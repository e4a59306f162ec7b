/**
 * The SIEM retry policy. A failed batch is sent again after an exponential backoff with
 * "equal jitter": half the exponential delay fixed, half random, so destinations that
 * failed together (a collector restarting) do not come back in lockstep, and a retry
 * never comes sooner than half the nominal delay. After `maxAttempts` deliveries of an
 * event its entry moves to the destination's dead-letter stream (`events:siem:<id>:dead`),
 * where an operator lists and retries it (`gateway dead-letters`, the admin API).
 *
 * Defaults: 15 attempts, 1 s doubling, capped at 5 min: fourteen waits of
 * 1+2+4+...+256 s then 5 × 300 s = 2011 s nominal, so about 17 to 34 minutes of trying
 * (the jitter takes half to all of each wait) before an event is dead-lettered: a
 * collector's restart or a short maintenance window passes without an operator. A collector down for a maintenance window longer than that leaves dead
 * letters to retry, never a silent gap.
 */
export interface RetryPolicy {
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 15, backoffBaseMs: 1_000, backoffMaxMs: 300_000 };

/** Delay before the attempt after `attempt` (1-based); `random` returns [0, 1). */
export function jitteredBackoff(policy: RetryPolicy, attempt: number, random: () => number): number {
  const nominal = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
