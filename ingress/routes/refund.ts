import type { Reason } from "../../shared/platform/reasons.js";
import { loadScript, runScript, type LuaScript } from "../../shared/platform/redis/scripts.js";
import type { IngressDeps } from "../deps.js";

/**
 * A call the gate counted `ok` whose answer then failed on the service's side (a 5xx) is
 * given back: interface.md section 8 charges refusals, not the service's own faults
 * (docs/security.md, item 11a). shared/platform/redis/lua/usage-refund-2.lua says how.
 */

export interface Charge {
  orgId: number;
  keyId: number;
  endpoint: string;
  /** Clock ms of the counted call. */
  nowMs: number;
  cycleStartMs: number;
}

let script: LuaScript | null = null;

/** Best effort: a refund that cannot reach Redis is logged, and the call stays counted. */
export async function refundCharge(deps: IngressDeps, charge: Charge, reason: Reason, requestId: string): Promise<void> {
  script ??= loadScript("usage-refund-2.lua");
  try {
    await runScript(
      deps.redis,
      script,
      [deps.keys.usageStreamOf(charge.orgId), deps.keys.cycleUsed(charge.orgId, charge.cycleStartMs)],
      [
        deps.clock.now(),
        new Date(charge.nowMs).toISOString().slice(0, 10),
        200_000,
        charge.orgId,
        charge.keyId,
        charge.endpoint,
        charge.cycleStartMs,
        reason,
      ],
    );
  } catch (error) {
    deps.logger.error({ err: error, requestId, orgId: charge.orgId, keyId: charge.keyId }, "could not refund a faulted call");
  }
}
