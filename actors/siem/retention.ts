import type { Clock } from "../../shared/platform/clock.js";
import { deleteEventsBefore } from "../../shared/events/index.js";
import type { Queryable } from "../../shared/platform/db/pool.js";
import type { Logger } from "../../shared/platform/log.js";
import { type Every, every } from "../runtime/index.js";

/** interface.md section 8: events are kept 90 days. */
export const RETENTION_DAYS = 90;
/** Rows per DELETE: each statement holds its row locks for milliseconds. */
export const RETENTION_BATCH = 1_000;
/** How often the job runs on its own (it also runs right after the test clock moves). */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * Deletes the events older than 90 days on the shared clock, in batches of
 * RETENTION_BATCH rows (one short statement each, never one long table-locking
 * delete), until none is left. Runs in the SIEM pusher's process; two copies at once only
 * share the work. Returns the number deleted.
 */
export async function pruneEvents(db: Queryable, nowMs: number, batch = RETENTION_BATCH): Promise<number> {
  const cutoff = nowMs - RETENTION_DAYS * 86_400_000;
  let total = 0;
  for (;;) {
    const deleted = await deleteEventsBefore(db, cutoff, batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}

export function startRetention(deps: { db: Queryable; clock: Clock; logger: Logger }, intervalMs = RETENTION_INTERVAL_MS): Every {
  return every(
    deps.clock,
    intervalMs,
    async () => {
      const deleted = await pruneEvents(deps.db, deps.clock.now());
      if (deleted > 0) deps.logger.info({ deleted }, "events past retention deleted");
    },
    { onError: (error) => deps.logger.warn({ err: error }, "event retention failed; will run again") },
  );
}
