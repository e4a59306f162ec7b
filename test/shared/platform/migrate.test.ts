import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { userInfo } from "node:os";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate } from "../../../shared/platform/db/migrate.js";
import { createPool, ensureDatabase, type Pool } from "../../../shared/platform/db/pool.js";

const SERVER = `postgres://${process.env.PGUSER || userInfo().username}@127.0.0.1:5432`;
const created: string[] = [];
const pools: Pool[] = [];

/** A database name nobody has used: the migrator must start from nothing. */
function freshName(label: string): string {
  const name = `gwtest_${label}_${randomBytes(4).toString("hex")}`;
  created.push(name);
  return name;
}

async function createEmpty(label: string): Promise<string> {
  const name = freshName(label);
  const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return `${SERVER}/${name}`;
}

function pool(url: string): Pool {
  const p = createPool(url, 2);
  pools.push(p);
  return p;
}

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe("migrate", () => {
  it("applied twice in parallel on a fresh database: no error, each migration once; a third run applies nothing", async () => {
    const url = await createEmpty("migpar");
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
    expect(files.length).toBeGreaterThan(0);

    const [first, second] = await Promise.all([migrate(pool(url)), migrate(pool(url))]);
    // One of them applied everything, the other waited on the lock and found it done.
    expect([...first, ...second].sort()).toEqual(files);
    expect(first.length === 0 || second.length === 0).toBe(true);

    const check = pool(url);
    const { rows } = await check.query<{ name: string; n: number }>(
      "SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name ORDER BY name",
    );
    expect(rows).toEqual(files.map((name) => ({ name, n: 1 })));
    expect(await migrate(check)).toEqual([]);
    const tables = await check.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["orgs", "api_keys", "activity", "cycle_usage"]));
  });

  it("a failing migration leaves no half state, records nothing and releases the lock", async () => {
    const url = await createEmpty("migfail");
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    try {
      await writeFile(join(dir, "0001_good.sql"), "CREATE TABLE good (id int);");
      await writeFile(join(dir, "0002_bad.sql"), "CREATE TABLE half (id int);\nSELEC broken;");
      await writeFile(join(dir, "notes.txt"), "not a migration");
      const p = pool(url);
      await expect(migrate(p, dir)).rejects.toThrow(/0002_bad\.sql/);
      const recorded = await p.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
      expect(recorded.rows.map((r) => r.name)).toEqual(["0001_good.sql"]);
      const half = await p.query("SELECT to_regclass('public.half') AS t");
      expect(half.rows[0].t).toBeNull();

      // Fixed: the next run (another session) is not blocked by a leftover lock and applies only the fix.
      await writeFile(join(dir, "0002_bad.sql"), "CREATE TABLE half (id int);");
      expect(await migrate(pool(url), dir)).toEqual(["0002_bad.sql"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("0014 gives each older token the member its created_by names, within the token's organization", async () => {
    const url = await createEmpty("migtok");
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    try {
      const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
      const before = files.filter((f) => f < "0014");
      for (const f of before) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
      const p = pool(url);
      await migrate(p, dir);
      const org = async (name: string) =>
        (
          await p.query<{ id: number }>(
            "INSERT INTO orgs (name, plan, subscription, cycle_anchor, created_at, updated_at) VALUES ($1, 'free', 'active', now(), now(), now()) RETURNING id",
            [name],
          )
        ).rows[0].id;
      const member = async (orgId: number, name: string, email: string) =>
        (
          await p.query<{ id: number }>(
            "INSERT INTO members (org_id, name, email, role, created_at) VALUES ($1, $2, $3, 'owner', now()) RETURNING id",
            [orgId, name, email],
          )
        ).rows[0].id;
      let n = 0;
      const token = async (orgId: number, createdBy: string) =>
        (
          await p.query<{ id: number }>(
            "INSERT INTO org_tokens (org_id, name, token_hash, prefix, scopes, created_by, created_at) VALUES ($1, 't', $2, 'ot', '{read}', $3, now()) RETURNING id",
            [orgId, Buffer.from([++n]), createdBy],
          )
        ).rows[0].id;
      const a = await org("A");
      const b = await org("B");
      const ann = await member(a, "Ann", "ann@example.com");
      await member(b, "Ann", "ann@example.com");
      const made = {
        byAnn: await token(a, "Ann <ann@example.com>"),
        byOperator: await token(a, "operator"),
        byRenamed: await token(a, "Annie <ann@example.com>"),
        // The same text in another organization names that organization's member, not A's.
        inB: await token(b, "Ann <ann@example.com>"),
      };
      await copyFile(join(MIGRATIONS_DIR, "0014_token_creator.sql"), join(dir, "0014_token_creator.sql"));
      expect(await migrate(p, dir)).toEqual(["0014_token_creator.sql"]);
      const { rows } = await p.query<{ id: number; created_by_member: number | null }>("SELECT id, created_by_member FROM org_tokens");
      const of = (id: number) => rows.find((r) => r.id === id)?.created_by_member;
      expect(of(made.byAnn)).toBe(ann);
      expect(of(made.byOperator)).toBeNull();
      expect(of(made.byRenamed)).toBeNull();
      expect(of(made.inB)).not.toBe(ann);
      expect(of(made.inB)).not.toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("ensureDatabase creates a missing database once, even when called in parallel", async () => {
    const name = freshName("ensure");
    const url = `${SERVER}/${name}`;
    const results = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
    expect(results.filter(Boolean).length).toBeLessThanOrEqual(1);
    expect(await ensureDatabase(url)).toBe(false);
    const p = pool(url);
    expect((await p.query("SELECT current_database() AS db")).rows[0].db).toBe(name);
  });
});
