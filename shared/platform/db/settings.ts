import type { Queryable } from "./pool.js";

/** The settings table: values the deployment keeps in PostgreSQL (the development master secret). */

/** Stores `value` under `name` unless a value is there already; returns the one stored. */
export async function storeSettingOnce(db: Queryable, name: string, value: Buffer, nowMs: number): Promise<Buffer> {
  await db.query(
    `INSERT INTO settings (name, value, created_at) VALUES ($1, $2, to_timestamp($3 / 1000.0))
     ON CONFLICT (name) DO NOTHING`,
    [name, value, nowMs],
  );
  const { rows } = await db.query<{ value: Buffer }>("SELECT value FROM settings WHERE name = $1", [name]);
  return rows[0].value;
}

/** Reads the value stored under `name`, or null. */
export async function readSetting(db: Queryable, name: string): Promise<Buffer | null> {
  const { rows } = await db.query<{ value: Buffer }>("SELECT value FROM settings WHERE name = $1", [name]);
  return rows[0]?.value ?? null;
}

/**
 * Demo mode's ADMIN_TOKEN (`npm start` without ADMIN_TOKEN): drawn once and kept like the
 * development master secret, so it survives restarts and `gateway admin-token` prints it.
 */
export const DEMO_ADMIN_TOKEN = "demo_admin_token";
