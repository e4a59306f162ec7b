import { ping } from "../shared/platform/db/pool.js";
import { deploymentMetrics } from "../shared/platform/metrics/actors.js";
import type { IngressDeps } from "./deps.js";
import { ok, refuse, refuseField } from "./reply.js";
import type { HttpReply, HttpRequest } from "./types.js";
import type { AdminHandler } from "./admin/common.js";

/** /healthz: Redis and PostgreSQL answer and snapshots are loaded. */
export async function healthz(_request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const timeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), 2000).unref())]);
  try {
    const present = await timeout(Promise.all(deps.keys.snapshotSentinels().map((sentinel) => deps.redis.exists(sentinel))));
    if (!present.every((n) => n === 1))
      return { status: 503, body: { ok: false, reason: "snapshots_loading", message: "The key snapshots are being loaded." } };
  } catch {
    return { status: 503, body: { ok: false, reason: "redis_unavailable", message: "Redis does not answer." } };
  }
  try {
    await timeout(ping(deps.db));
  } catch {
    return { status: 503, body: { ok: false, reason: "database_unavailable", message: "PostgreSQL does not answer." } };
  }
  return { status: 200, body: { ok: true } };
}

export async function metrics(_request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  return {
    status: 200,
    headers: { "content-type": deps.metrics.contentType },
    body: await deploymentMetrics(deps.metrics, deps.redis, deps.keys),
  };
}

/** The test clock (operator-api.md section 4): routes present only with GATEWAY_TEST_CLOCK=1 (admin/routes.ts). */
export const hasTestClock = (deps: IngressDeps): boolean => deps.testClock !== null;

export const getClock: AdminHandler = (_request, deps) => ok({ now: deps.clock.nowSeconds() });

export const moveClock: AdminHandler = async (_request, deps, _params, body) => {
  const control = deps.testClock;
  if (!control) return refuse("unknown_endpoint");
  const advance = body.advance_s;
  if (typeof advance !== "number" || !Number.isFinite(advance) || advance < 0 || advance > 10 * 365 * 86400) {
    return refuseField("bad_advance_s", "advance_s must be a number of seconds >= 0");
  }
  return ok({ now: await control.advance(advance) });
};
