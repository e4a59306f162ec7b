import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";
import { migrate } from "../../shared/db/migrate.js";
import { createPool, type Pool } from "../../shared/db/pool.js";

const SERVER = `postgres://${process.env.PGUSER || userInfo().username}@127.0.0.1:5432`;

/** A fresh, migrated database for one test file, dropped at the end. */
export async function createTestDatabase(label: string): Promise<{ url: string; pool: Pool; drop(): Promise<void> }> {
  const name = `gwtest_${label.replace(/[^a-z0-9]/gi, "").toLowerCase().slice(0, 20)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = `${SERVER}/${name}`;
  const pool = createPool(url, 5);
  await migrate(pool);
  return {
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      const client = new pg.Client({ connectionString: `${SERVER}/postgres` });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
