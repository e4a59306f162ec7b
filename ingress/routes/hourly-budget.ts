import type { IngressDeps } from "../deps.js";

/**
 * A per-organization budget in fixed windows of one clock hour (interface.md section 8:
 * 10 fresh scans, 120 assignment changes and 30 re-checks per hour), with its X-RateLimit
 * headers. `keyOf` names the window's counter. `take` spends one unit; otherwise the budget is only read.
 */
export interface HourlyBudget {
  allowed: boolean;
  headers: Record<string, string>;
}

export async function hourlyBudget(
  deps: IngressDeps,
  keyOf: (hour: number) => string,
  limit: number,
  take: boolean,
): Promise<HourlyBudget> {
  const hour = Math.floor(deps.clock.nowSeconds() / 3600);
  const key = keyOf(hour);
  let used: number;
  if (take) {
    const result = await deps.redis.multi().incr(key).expire(key, 3700).exec();
    used = Number(result?.[0]?.[1] ?? limit + 1);
  } else {
    used = Number((await deps.redis.get(key)) ?? 0);
  }
  return {
    allowed: used <= limit,
    headers: {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - used)),
      "x-ratelimit-reset": String((hour + 1) * 3600),
    },
  };
}

/** interface.md section 8: per organization and hour. */
export const CHANGES_PER_HOUR = 120;
export const RECHECKS_PER_HOUR = 30;

/** The change budget: every assignments.php answer that knows the organization carries its headers. */
export const changeBudget = (deps: IngressDeps, orgId: number, take: boolean) =>
  hourlyBudget(deps, (hour) => deps.keys.hourlyBudget("assign", orgId, hour), CHANGES_PER_HOUR, take);
/** The re-check budget: answers to recheck=1 carry its headers instead. */
export const recheckBudget = (deps: IngressDeps, orgId: number, take: boolean) =>
  hourlyBudget(deps, (hour) => deps.keys.hourlyBudget("recheck", orgId, hour), RECHECKS_PER_HOUR, take);
