import { recordActivity } from "../../accounts/index.js";
import type { Clock } from "../../platform/clock.js";
import { dueRetirements, retireKey } from "../db/keys.js";
import { transaction, type Pool } from "../../platform/db/pool.js";
import { markPending } from "../db/projections.js";
import type { Logger } from "../../platform/log.js";
import type { Projector } from "./projector.js";

/**
 * Retires for good the keys whose rotation grace ended (docs/verify.md, "Rotation"). The
 * hot path already refuses such a key from the instant its grace ends (its snapshot
 * carries `retires_at_ms`); this sweep makes it revoked in PostgreSQL and projects the
 * revocation, which hands the old key's Redis installations to the key that replaced it
 * (key-retire-3.lua) and drops its snapshot and index.
 *
 * Each retirement is claimed by a conditional UPDATE, with its activity row and a
 * projection mark in the same transaction, so sweeps in several ingress processes never
 * retire a key twice, and a projection that fails (or a process that dies before it) is
 * finished by the reconcile loop. It runs every `intervalMs` and right after the test
 * clock moves.
 */
export interface RetirementDeps {
  db: Pool;
  projector: Projector;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  batch?: number;
}

export async function retireDueKeys(deps: Omit<RetirementDeps, "logger" | "intervalMs">): Promise<number> {
  const now = deps.clock.now();
  let retired = 0;
  for (const id of await dueRetirements(deps.db, now, deps.batch ?? 100)) {
    const row = await transaction(deps.db, async (tx) => {
      const claimed = await retireKey(tx, id, now);
      if (!claimed) return null;
      await markPending(tx, "key", id, now);
      await recordActivity(tx, {
        orgId: claimed.org_id,
        atMs: now,
        who: "system",
        via: "system",
        group: "team_security",
        action: `Key "${claimed.name}" retired: its rotation's grace ended`,
        actionCode: "key.retired",
        domain: claimed.domain,
        detail: { key_id: claimed.id, prefix: claimed.prefix, retired_at: claimed.retires_at?.toISOString() ?? null },
      });
      return claimed;
    });
    if (!row) continue;
    await deps.projector.keyChanged(row.id);
    retired++;
  }
  return retired;
}

export function retireKeysWhenDue(deps: RetirementDeps): { stop(): void; tick(): Promise<number> } {
  let running = false;
  let again = false;
  let failing = false;
  const tick = async (): Promise<number> => {
    if (running) {
      again = true;
      return 0;
    }
    running = true;
    let retired = 0;
    try {
      do {
        again = false;
        retired += await retireDueKeys(deps);
      } while (again);
      if (failing) deps.logger.info("key retirement sweep recovered");
      failing = false;
    } catch (error) {
      // PostgreSQL or Redis away: the keys are still due (or marked for the reconcile loop); the next tick retries.
      if (!failing) deps.logger.error({ err: error }, "key retirement sweep failed; retrying");
      failing = true;
    } finally {
      running = false;
    }
    return retired;
  };
  const timer = setInterval(() => void tick(), deps.intervalMs ?? 1000);
  timer.unref();
  const unsubscribe = deps.clock.onMove(() => void tick());
  return {
    stop: () => {
      clearInterval(timer);
      unsubscribe();
    },
    tick,
  };
}
