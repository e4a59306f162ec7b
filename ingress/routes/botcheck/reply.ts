import type { BotcheckAnswer } from "../../../shared/botcheck/index.js";
import { REASONS, type Reason } from "../../../shared/platform/reasons.js";
import type { HttpReply } from "../../types.js";
import { VERIFY_HEADERS } from "../verify/answer.js";

/**
 * HTTP replies of botcheck.php. Every answer carries the CORS header (the page's script
 * reads it) and `ts`, except the feature-off answer: interface.md 4.2 says it is
 * `{enforced:false, allow:true}` and nothing else. A refusal, whether of the key (invalid_key, domain_mismatch, ...) or
 * of the visitor (bot_ua, hold_too_short, ...), has the status of the reasons table and
 * `ok:false`, `enforced:true`, `allow:false` and `reason`; the other answers are 200.
 */

const HEADERS = VERIFY_HEADERS as Record<string, string>;

/**
 * Refusals without the key's blocked page: grant refusals (the visitor's remedy is a new
 * challenge), and the key's capacity (a full window or a spent allowance says nothing of this
 * visitor, and anyone holding the public key can fill the window).
 */
const NOT_BLOCKED: ReadonlySet<Reason> = new Set([
  "expired_challenge",
  "hold_too_short",
  "invalid_challenge",
  "rate_limited",
  "usage_limit_exceeded",
]);

/** The key's bot-check is off (interface.md 4.2): exactly these two fields. */
export function disabledReply(): HttpReply {
  return { status: 200, headers: HEADERS, body: { enforced: false, allow: true } };
}

/** `answer` is the caller's fresh object: `ts` is added to it (last, as a copy would put it), not to a copy. */
export function answerReply(answer: BotcheckAnswer, ts: number): HttpReply {
  const body: BotcheckAnswer & { ts?: number } = answer;
  body.ts = ts;
  return { status: 200, headers: HEADERS, body };
}

export function refusalReply(reason: Reason, ts: number, blockedUrl: string | null | undefined): HttpReply {
  const body: Record<string, unknown> = { ok: false, enforced: true, allow: false, reason };
  if (blockedUrl && !NOT_BLOCKED.has(reason)) body.blocked_url = blockedUrl;
  body.ts = ts;
  return { status: REASONS[reason].status, headers: HEADERS, body };
}
