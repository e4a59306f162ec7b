/**
 * The assignment-timer's thresholds (docs/findings.md). Days are calendar days in UTC on
 * the shared clock.
 */
/** `finding.near_target` this many days before the fix-time target (found_at + fix_target_days). */
export const NEAR_TARGET_DAYS = 3;
/** `finding.escalated` once a finding is this many days past its due date. */
export const ESCALATE_AFTER_DAYS = 7;
/** `risk.expiring` this many days before an acceptance's expiry; `risk.expired` at it. */
export const RISK_EXPIRING_DAYS = 7;
/** How often the timer looks on its own; it also looks right after the test clock moves. */
export const TIMER_INTERVAL_MS = 30_000;
/** Crossings handled per kind and run; the next run takes the rest. */
export const TIMER_BATCH = 500;
