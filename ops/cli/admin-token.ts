import type { Config } from "../../shared/platform/config.js";
import { createPool, resolveDatabaseUrl } from "../../shared/platform/db/pool.js";
import { DEMO_ADMIN_TOKEN, readSetting } from "../../shared/platform/db/settings.js";
import { type CliIo, CliFailure, EXIT, print, printJson } from "./io.js";

/** `gateway admin-token`: demo mode's admin token, kept in PostgreSQL by `npm start`. */
export async function adminTokenCommand(options: {
  config: Config;
  pgUser: string | undefined;
  io: CliIo;
  json: boolean;
}): Promise<number> {
  if (options.config.adminToken)
    throw new CliFailure("ADMIN_TOKEN is set in this environment: that is the admin token (demo mode keeps one only when it is unset)");
  const pool = createPool(resolveDatabaseUrl(options.config.databaseUrl, options.pgUser), 1);
  try {
    const stored = await readSetting(pool, DEMO_ADMIN_TOKEN);
    if (stored === null) throw new CliFailure("no demo admin token yet: `npm start` without ADMIN_TOKEN makes one");
    const token = stored.toString("utf8");
    if (options.json) printJson(options.io, { ok: true, admin_token: token });
    else print(options.io, token);
    return EXIT.ok;
  } finally {
    await pool.end().catch(() => {});
  }
}
