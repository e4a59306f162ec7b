/** Plans as data (interface.md section 8). null = unlimited. */
export const PLANS = {
  free: { calls: 1_000, keys: 1 },
  starter: { calls: 300_000, keys: 3 },
  professional: { calls: 2_500_000, keys: 15 },
  enterprise: { calls: null, keys: null },
} as const satisfies Record<string, { calls: number | null; keys: number | null }>;

export type Plan = keyof typeof PLANS;

export const PLAN_NAMES = Object.keys(PLANS) as Plan[];

/** The subscription window: 30 days, rolling on its own while the subscription is live. */
export const CYCLE_MS = 30 * 24 * 3600 * 1000;

export function cycleStart(anchorMs: number, nowMs: number): number {
  if (nowMs <= anchorMs) return anchorMs;
  return anchorMs + Math.floor((nowMs - anchorMs) / CYCLE_MS) * CYCLE_MS;
}

/**
 * When the organization's keys stop working for lack of a subscription: the end of the
 * current window while active (it rolls on), the end of the window in which the
 * subscription lapsed otherwise.
 */
export function windowEnd(org: { cycleAnchorMs: number; lapsedAtMs: number | null }, nowMs: number): number {
  const reference = org.lapsedAtMs ?? nowMs;
  return cycleStart(org.cycleAnchorMs, reference) + CYCLE_MS;
}
