import type { Redis } from "../../shared/platform/redis/client.js";
import type { Config } from "../../shared/platform/config.js";
import { openContext } from "../../shared/platform/context.js";
import { silentLogger } from "../../shared/platform/log.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { createProjector } from "../../shared/verify/index.js";
import { type CliIo, EXIT, print, printJson } from "./io.js";

/**
 * `gateway snapshots rebuild`: deleting the sentinel makes every running gateway rebuild
 * the Redis snapshots from PostgreSQL (their watcher notices within a second). `--now`
 * rebuilds from this process instead, for when no gateway runs.
 */
export async function rebuildBySentinel(options: { redis: Redis; keys: Keys; io: CliIo; json: boolean }): Promise<number> {
  const deleted = (await options.redis.del(options.keys.snapshotSentinel())) === 1;
  if (options.json) {
    printJson(options.io, { ok: true, sentinel_deleted: deleted });
  } else {
    print(
      options.io,
      deleted
        ? "Snapshot sentinel deleted: running gateways rebuild from PostgreSQL within a few seconds (/healthz is 503 meanwhile)."
        : "The snapshot sentinel was already missing: running gateways are rebuilding. With no gateway running, use --now.",
    );
  }
  return EXIT.ok;
}

export async function rebuildNow(options: { config: Config; pgUser: string | undefined; io: CliIo; json: boolean }): Promise<number> {
  const ctx = await openContext(options.config, "ops", { logger: silentLogger(), pgUser: options.pgUser });
  try {
    const started = Date.now();
    const result = await createProjector(ctx).rebuildAll();
    const ms = Date.now() - started;
    if (options.json) printJson(options.io, { ok: true, orgs: result.orgs, keys: result.keys, ms });
    else print(options.io, `Rebuilt the snapshots of ${result.orgs} organizations and ${result.keys} keys in ${ms} ms.`);
    return EXIT.ok;
  } finally {
    await ctx.close();
  }
}
