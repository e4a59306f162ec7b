import { CYCLE_MS, cycleStart, windowEnd } from "../accounts/index.js";
import type { KeySnapshot, OrgSnapshot } from "./snapshots/types.js";
import { PASS, refuse, type Verdict } from "./types.js";

type OrgWindow = Pick<OrgSnapshot, "cycle_anchor_ms" | "lapsed_at_ms">;

/**
 * When the key stops working: the organization's 30-day window end, or the key's hard
 * `expires_at` when that comes first. The window rolls on while the subscription is
 * active (its end is then always the current window's end) and stops at the end of the
 * window in which the subscription lapsed. A hard end expires the key whatever the
 * subscription; it does not keep a key alive past a lapsed subscription's window (the
 * admin view, ingress/admin/key-view.ts, shows the same end).
 */
export function effectiveEnd(key: Pick<KeySnapshot, "expires_at_ms">, org: OrgWindow, nowMs: number): number {
  const window = windowEnd({ cycleAnchorMs: org.cycle_anchor_ms, lapsedAtMs: org.lapsed_at_ms }, nowMs);
  return key.expires_at_ms === null ? window : Math.min(key.expires_at_ms, window);
}

export function checkExpiry(key: Pick<KeySnapshot, "expires_at_ms">, org: OrgWindow, nowMs: number): Verdict {
  return nowMs >= effectiveEnd(key, org, nowMs) ? refuse("expired") : PASS;
}

/**
 * Start of the allowance cycle the call is counted in: the same arithmetic as
 * `orgCycle` in shared/accounts/db/orgs.ts, so the ingress and the projector name the same
 * `cycleUsed` counter. A lapsed organization stays in the window it lapsed in.
 */
export function allowanceCycle(org: OrgWindow, nowMs: number): { startMs: number; endMs: number } {
  const startMs = cycleStart(org.cycle_anchor_ms, org.lapsed_at_ms ?? nowMs);
  return { startMs, endMs: startMs + CYCLE_MS };
}
