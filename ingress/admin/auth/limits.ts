import type { Budget } from "../../../shared/accounts/index.js";
import { sha256 } from "../../../shared/platform/crypto/hash.js";
import { sourceId } from "../../../shared/verify/index.js";
import type { IngressDeps } from "../../deps.js";
import { refuse } from "../../reply.js";
import type { HttpReply, HttpRequest } from "../../types.js";

/**
 * Sign-in budgets (shared/accounts/policy.ts): fixed windows on the shared clock, one Redis
 * counter each (INCR, EXPIRE in one MULTI). The subject is a digest, never an address or an
 * e-mail in clear: the source network as the per-source key limit counts it (an IPv6
 * address by its /64), or the lower-cased e-mail.
 */

export function sourceSubject(request: HttpRequest): string {
  return sourceId(request.remoteAddress) || "unknown";
}

export function emailSubject(email: string): string {
  return sha256(email.trim().toLowerCase()).toString("base64url").slice(0, 22);
}

function windowOf(deps: IngressDeps, budget: Budget): { key: (subject: string) => string; endS: number } {
  const window = Math.floor(deps.clock.nowSeconds() / budget.windowS);
  return { key: (subject) => deps.keys.authBudget(budget.name, subject, window), endS: (window + 1) * budget.windowS };
}

function limited(deps: IngressDeps, endS: number): HttpReply {
  const retryAfter = Math.max(1, endS - deps.clock.nowSeconds());
  return refuse("signin_rate_limited", {}, { "retry-after": String(retryAfter), "cache-control": "no-store" });
}

/** Spends one unit; the refusal when the window's limit was already reached. */
export async function spend(deps: IngressDeps, budget: Budget, subject: string): Promise<HttpReply | null> {
  const { key, endS } = windowOf(deps, budget);
  const name = key(subject);
  const result = await deps.redis
    .multi()
    .incr(name)
    .expire(name, budget.windowS + 60)
    .exec();
  const used = Number(result?.[0]?.[1] ?? budget.limit + 1);
  return used > budget.limit ? limited(deps, endS) : null;
}

/** The refusal when the window's limit is reached, spending nothing (failures are spent only when they happen). */
export async function exhausted(deps: IngressDeps, budget: Budget, subject: string): Promise<HttpReply | null> {
  const { key, endS } = windowOf(deps, budget);
  const used = Number((await deps.redis.get(key(subject))) ?? 0);
  return used >= budget.limit ? limited(deps, endS) : null;
}
