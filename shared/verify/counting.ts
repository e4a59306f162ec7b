import { REASONS, type Reason } from "../platform/reasons.js";

/**
 * The three rules that need shared state: installation, per-minute rate and cycle
 * allowance. They run inside the counting script (shared/platform/redis/lua/verify-batch-n.lua)
 * so that deciding and counting are one atomic step; this file is their TypeScript
 * side: which reasons they give and how a script result maps back.
 *
 * Gate semantics (docs/verify.md): a call whose outcome would count against the
 * allowance (an `ok`, or a counted refusal such as `domain_mismatch`) must first pass
 * the rate gate, then the allowance gate. A shut gate answers instead of the outcome
 * and the call is not counted:
 *   - rate: `rate_limited` when the key's window for this minute already holds
 *     `rate_per_minute` counted calls. A refused call does not take a slot, so the
 *     window holds exactly the counted calls of the minute.
 *   - allowance: `usage_limit_exceeded` when the organization's pooled counter for the
 *     cycle has reached the plan's allowance (null = unlimited).
 * Two refinements (docs/security.md, item 1):
 *   - a counted refusal (of the place rules, the scope, the key's state, the bot check:
 *     any outcome of the pure rules or the route's own check but "ok") still counts against
 *     the allowance, but takes its slot in a separate refusal window of the key with the
 *     same limit, so a flood of calls that are refused never shuts honest callers out;
 *   - with `rate_per_source_per_minute` set, a per-source window (sourceId) is checked
 *     first: a source past it is answered `rate_limited` before the key's window is touched.
 * Only then is the installation judged (for calls that passed every pure rule): the
 * first installation a key is seen on, the unnamed one (no `install`) included, is
 * recorded `approved` (installations.ts); another one is recorded `pending` and refused
 * `installation_pending`; `blocked` is refused `installation_blocked`. Both refusals count.
 */

export const COUNTED_RULES = [
  { name: "rate", reasons: ["rate_limited"] },
  { name: "allowance", reasons: ["usage_limit_exceeded"] },
  { name: "installation", reasons: ["installation_pending", "installation_blocked"] },
] as const satisfies readonly { name: string; reasons: readonly Reason[] }[];

/**
 * Whether a counted outcome takes a slot of the key's shared window (else of its refusal
 * window). Only a call the rules passed does: whatever a caller sends that is refused (a
 * wrong domain, a scope the key lacks, a user agent that names a bot) fills a window of its
 * own, never the one the site's own visitors pass through.
 */
export function takesKeySlot(outcome: Reason | "ok"): boolean {
  return outcome === "ok";
}

/** What the script answers for one request. */
export type ScriptOutcome = { kind: "answer"; reason: Reason | "ok" } | { kind: "stale" };

export function scriptOutcome(code: unknown): ScriptOutcome {
  const text = typeof code === "string" ? code : Buffer.isBuffer(code) ? code.toString("utf8") : "";
  if (text === "stale") return { kind: "stale" };
  if (text === "ok") return { kind: "answer", reason: "ok" };
  if (Object.hasOwn(REASONS, text)) return { kind: "answer", reason: text as Reason };
  throw new Error(`counting script answered ${JSON.stringify(code)}`);
}

/** interface.md section 8: which outcomes count against the organization's allowance. */
export function counts(outcome: Reason | "ok"): boolean {
  return outcome === "ok" || REASONS[outcome].counts;
}
