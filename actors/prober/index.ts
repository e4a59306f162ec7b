import type { Context } from "../../shared/platform/context.js";
import type { ActorStarter } from "../index.js";
import { outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import { every } from "../runtime/index.js";
import { scanOptionsOf } from "../../shared/platform/net/outbound/options.js";
import { backfillDailyRollups, probeRound, pruneOldChecks, type ProberDeps } from "./handler.js";

/**
 * The status prober: a timer actor on the shared clock. It wakes every few seconds (and
 * at once when the test clock moves) and checks what the current interval slot has not
 * checked yet, so a check lands within a tick of each slot's start. Any number of copies
 * may run: each slot is checked and recorded once (handler.ts).
 */

/** How often the prober looks for an unchecked slot: small against the interval, cheap (one SET NX per service). */
const TICK_MS = 2_000;
const PRUNE_EVERY_MS = 3_600_000;

export function proberDeps(ctx: Context): ProberDeps {
  return {
    db: ctx.db,
    redis: ctx.redis,
    keys: ctx.keys,
    clock: ctx.clock,
    // Probes go to the operator's own services: private space when PROBE_ALLOW_PRIVATE says
    // so. They trust SCAN_CA_FILE and connect to the port the URL names (80/443 by default),
    // not SCAN_HTTP(S)_PORT.
    options: {
      ...scanOptionsOf(ctx.config),
      outbound: outboundPolicyOf("probe", ctx.config),
      httpPort: 80,
      httpsPort: 443,
      timeoutMs: ctx.config.statusProbeTimeoutMs,
    },
    intervalMs: ctx.config.statusProbeIntervalS * 1000,
  };
}

export function startProberWith(ctx: Context, deps: ProberDeps, tickMs = TICK_MS) {
  let lastPrune = 0;
  const timer = every(
    ctx.clock,
    tickMs,
    async () => {
      await probeRound(deps);
      if (ctx.clock.now() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = ctx.clock.now();
        const removed = await pruneOldChecks(deps);
        if (removed > 0) ctx.logger.info({ removed }, "pruned old status checks");
        const filled = await backfillDailyRollups(deps);
        if (filled > 0) ctx.logger.info({ filled }, "wrote missing daily status roll-ups");
      }
    },
    { onError: (error) => ctx.logger.error({ err: error }, "status probe round failed") },
  );
  return { stop: () => timer.stop() };
}

export const startProber: ActorStarter = async (ctx) => startProberWith(ctx, proberDeps(ctx));
