import type { Queryable } from "../platform/db/pool.js";
import type { Keys } from "../platform/redis/keys.js";
import type { Redis } from "../platform/redis/client.js";
import { loadScript, runScript } from "../platform/redis/scripts.js";
import { deleteStalePending, type StalePending } from "./db/stale-installations.js";

/**
 * Pending installations the owner did not decide on within this long of their first call are
 * forgotten: a stranger holding a client key can name 20 new installations a day
 * (PENDING_INSTALLS_PER_DAY), each a Redis entry, a row and a notice, so without an end they
 * would pile up for good, and counted from the first call (not the last) a stranger calling
 * each name now and then cannot keep them. So at most ~600 (20 a day for 30 days) wait per
 * key. A real installation still calling is recorded again by its next call, and announced
 * again: the owner is reminded. Approved and blocked installations are kept.
 */
export const PENDING_INSTALL_RETENTION_MS = 30 * 86_400_000;

const BATCH = 500;

const forgetScript = loadScript("installation-forget-1.lua");

/**
 * Forgets the pending installations first seen before `nowMs - PENDING_INSTALL_RETENTION_MS`:
 * their rows and notices first, then their Redis entries where still pending. In that order
 * a race heals: a call sighting one in between writes its row back (a fresh first sighting),
 * and the next run forgets it in its turn. (A projection of the key running at the same time
 * can write a forgotten entry back to Redis without a row; its next call writes the row.)
 * Returns how many rows were deleted.
 */
export async function forgetStalePendingInstallations(db: Queryable, redis: Redis, keys: Keys, nowMs: number): Promise<number> {
  const cutoffMs = nowMs - PENDING_INSTALL_RETENTION_MS;
  let deleted = 0;
  for (;;) {
    const rows = await deleteStalePending(db, cutoffMs, BATCH);
    if (rows.length === 0) return deleted;
    deleted += rows.length;
    const byKey = new Map<number, StalePending[]>();
    for (const row of rows) byKey.set(row.key_id, [...(byKey.get(row.key_id) ?? []), row]);
    for (const [keyId, stale] of byKey) {
      await runScript(
        redis,
        forgetScript,
        [keys.installations(stale[0].org_id, keyId)],
        stale.map((s) => s.install),
      );
    }
  }
}
