import { loadScript, runScript, type LuaScript } from "../../shared/platform/redis/scripts.js";
import { OTHER_LABEL, ROUTE_LABELS, type CountingCall } from "../../shared/verify/index.js";
import type { IngressDeps } from "../deps.js";
import type { Charge, HttpReply, HttpRequest } from "../types.js";

/**
 * A call the gate counted `ok` whose answer then failed on the service's side (a 5xx) is
 * given back: interface.md section 8 charges refusals, not the service's own faults
 * (docs/security.md, item 11a). Every gated endpoint: the route wrapper (app.ts) refunds
 * `request.charged` when the answer is a fault. shared/platform/redis/lua/usage-refund-3.lua
 * says how.
 */

export type { Charge };

/** What a counted call charged. */
export function chargeOf(call: CountingCall): Charge {
  return {
    orgId: call.orgId,
    keyId: call.keyId,
    endpoint: call.endpoint,
    nowMs: call.nowMs,
    cycleStartMs: call.cycleStartMs,
    day: call.day ?? new Date(call.nowMs).toISOString().slice(0, 10),
  };
}

let script: LuaScript | null = null;

/** Best effort: a refund that cannot reach Redis is logged, and the call stays counted. */
export async function refundCharge(deps: IngressDeps, charge: Charge, reason: string, requestId: string): Promise<void> {
  script ??= loadScript("usage-refund-3.lua");
  // The day the counting run recorded the call under: its usage event and its label set.
  const { day } = charge;
  try {
    await runScript(
      deps.redis,
      script,
      [
        deps.keys.usageStreamOf(charge.orgId),
        deps.keys.cycleUsed(charge.orgId, charge.cycleStartMs),
        deps.keys.endpointLabels(charge.orgId, charge.keyId, day),
      ],
      [
        deps.clock.now(),
        day,
        200_000,
        charge.orgId,
        charge.keyId,
        charge.endpoint,
        charge.cycleStartMs,
        reason,
        ROUTE_LABELS.has(charge.endpoint) ? "0" : "1",
        OTHER_LABEL,
      ],
    );
  } catch (error) {
    deps.logger.error({ err: error, requestId, orgId: charge.orgId, keyId: charge.keyId }, "could not refund a faulted call");
  }
}

/**
 * Gives back what `request` was charged when `reply` is a fault (5xx), once: the route
 * wrapper (app.ts) runs it on every answer of a charged request.
 */
export async function refundFault(deps: IngressDeps, request: HttpRequest, reply: HttpReply): Promise<void> {
  const charged = request.charged;
  if (charged === undefined || reply.status < 500) return;
  request.charged = undefined;
  const reason = (reply.body as { reason?: unknown } | null)?.reason;
  await refundCharge(deps, charged, typeof reason === "string" ? reason : "internal_error", request.requestId);
}
