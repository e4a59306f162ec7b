import type { Queryable } from "../platform/db/pool.js";
import type { Keys } from "../platform/redis/keys.js";
import type { Redis } from "../platform/redis/client.js";
import { loadScript, runScript } from "../platform/redis/scripts.js";
import { deleteStalePending, stalePendingInstallations, type StalePending } from "./db/stale-installations.js";

/**
 * Pending installations nobody decided on and nobody called with for this long are forgotten:
 * a stranger holding a client key can name 20 new installations a day (PENDING_INSTALLS_PER_DAY),
 * each a Redis entry, a row and a notice, so without an end they would pile up for good.
 * Approved and blocked installations are the owner's decisions and are kept.
 */
export const PENDING_INSTALL_RETENTION_MS = 30 * 86_400_000;

const BATCH = 500;

const forgetScript = loadScript("installation-forget-1.lua");

/**
 * Forgets the pending installations last seen before `nowMs - PENDING_INSTALL_RETENTION_MS`:
 * first in Redis (only where still pending), then their rows and notices, each re-checked in
 * the DELETE, so an installation called again meanwhile keeps its row (its sighting moved
 * last_seen_at) and, forgotten in Redis, is recorded again as a new one. Returns how many
 * rows were deleted.
 */
export async function forgetStalePendingInstallations(db: Queryable, redis: Redis, keys: Keys, nowMs: number): Promise<number> {
  const cutoffMs = nowMs - PENDING_INSTALL_RETENTION_MS;
  let deleted = 0;
  let after = { keyId: 0, install: "" };
  for (;;) {
    const rows = await stalePendingInstallations(db, cutoffMs, after, BATCH);
    if (rows.length === 0) return deleted;
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
    deleted += await deleteStalePending(db, rows, cutoffMs);
    const last = rows[rows.length - 1];
    after = { keyId: last.key_id, install: last.install };
  }
}
