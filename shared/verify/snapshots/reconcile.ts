import type { Pool } from "../../platform/db/pool.js";
import { pendingProjections } from "../db/projections.js";
import type { Logger } from "../../platform/log.js";
import type { Projector } from "./projector.js";

/**
 * Repairs drift between PostgreSQL and Redis: every `intervalMs` it projects again each
 * change whose projection is still owed (projection_pending: the Redis write failed, or
 * the process died between marking and clearing). A projection reads the newest row
 * under its advisory lock and is idempotent, so running one twice, or alongside the
 * admin call's own, is harmless. Each ingress process runs one.
 */
export function reconcileProjections(deps: { db: Pool; projector: Projector; logger: Logger; intervalMs?: number; batch?: number }): {
  stop(): void;
  tick(): Promise<number>;
} {
  const { db, projector, logger } = deps;
  let running = false;
  let failing = false;
  const tick = async (): Promise<number> => {
    if (running) return 0;
    running = true;
    let repaired = 0;
    try {
      for (const owed of await pendingProjections(db, deps.batch ?? 200)) {
        if (owed.kind === "key") await projector.keyChanged(owed.id, { installations: true });
        else if (owed.kind === "org") await projector.orgChanged(owed.id);
        else await projector.contentChanged(owed.id);
        repaired++;
      }
      if (failing) logger.info("projection reconcile recovered");
      failing = false;
      if (repaired > 0) logger.warn({ repaired }, "projections repaired by reconcile");
    } catch (error) {
      // Redis or PostgreSQL still away: the marks stay, the next tick tries again.
      if (!failing) logger.error({ err: error }, "projection reconcile failed; retrying");
      failing = true;
    } finally {
      running = false;
    }
    return repaired;
  };
  const timer = setInterval(() => void tick(), deps.intervalMs ?? 1000);
  timer.unref();
  return { stop: () => clearInterval(timer), tick };
}
