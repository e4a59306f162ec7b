import { readdir, readFile } from "node:fs/promises";
import type { Pool } from "./pool.js";
import { sourcePath } from "../paths.js";

/**
 * Applies the numbered, append-only migrations in shared/platform/db/migrations. A session-level
 * advisory lock serializes concurrent starters: the second waits, then finds every
 * migration recorded in the ledger and applies nothing. Each migration runs in its own
 * transaction together with its ledger row, so a failed one leaves no half-state.
 */
const LOCK_ID = 0x6761_7465; // "gate"

export const MIGRATIONS_DIR = sourcePath("shared", "platform", "db", "migrations");

export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set((await client.query<{ name: string }>("SELECT name FROM schema_migrations")).rows.map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(`${dir}/${file}`, "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query("INSERT INTO schema_migrations (name) VALUES ($1)", [file]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${file} failed: ${(error as Error).message}`);
      }
      applied.push(file);
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}
