import { userInfo } from "node:os";
import pg from "pg";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a transaction's client. Queries take it first. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

// BIGINT (int8) ids and counters fit comfortably in a double for this service's ranges.
pg.types.setTypeParser(20, (v) => Number(v));
// DATE stays a plain YYYY-MM-DD string: no time-zone shifts.
pg.types.setTypeParser(1082, (v) => v);

/**
 * pg refuses a connection string without a user name when USER is unset (as on these
 * machines), so one is resolved: the URL's, else PGUSER, else the OS account.
 */
export function resolveDatabaseUrl(url: string, pgUser: string | undefined): string {
  const parsed = new URL(url);
  if (!parsed.username) parsed.username = pgUser || userInfo().username;
  return parsed.toString();
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, "")) || "postgres";
}

export function createPool(url: string, max = 10): Pool {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 10_000, connectionTimeoutMillis: 5_000 });
  // A client losing its connection must not crash the process: idle ones report to the
  // pool, checked-out ones to themselves (an 'error' event nobody listens to is thrown).
  // Their queries fail and reach the caller; the pool drops the broken client on release.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  return pool;
}

/** Runs fn in a transaction on one checked-out client, released in finally. */
export async function transaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Creates the database named in `url` when it does not exist (needs CREATEDB). */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    } catch (error) {
      // Another process created it between our check and our create: 42P04 when it had
      // committed, 23505 (pg_database's unique index) when both were in flight at once.
      const code = (error as { code?: string }).code;
      if (code !== "42P04" && code !== "23505") throw error;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

/** One trivial query: is PostgreSQL answering (health checks). */
export async function ping(db: Queryable): Promise<void> {
  await db.query("SELECT 1");
}

/** Process ids of the server's backends connected to the database of `db` (the bench reads their CPU time). */
export async function backendPids(db: Queryable): Promise<number[]> {
  const found = await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database()");
  return found.rows.map((row) => row.pid);
}

/** A page of a list: LIMIT and OFFSET of its query. */
export interface PageRange {
  limit: number;
  offset: number;
}

/** A page of rows and how many rows the whole list holds. */
export interface ListPage<T> {
  total: number;
  rows: T[];
}
