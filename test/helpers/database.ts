import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { userInfo } from "node:os";
import pg from "pg";
import { MIGRATIONS_DIR, migrate } from "../../shared/platform/db/migrate.js";
import { createPool, type Pool } from "../../shared/platform/db/pool.js";
import { sourcePath } from "../../shared/platform/paths.js";

/**
 * Test databases are clones of one migrated template (`CREATE DATABASE ... TEMPLATE`), so a
 * test file pays for a file copy instead of every migration. The template's name carries a
 * hash of the migrations (and of the migrator, which creates the ledger table): a changed
 * migration gives a new template, and the vitest global setup (test/helpers/global-setup.ts)
 * builds it once per run and drops the stale ones.
 *
 * PostgreSQL refuses to clone a database anyone is connected to, so the template is built
 * under another name, its pool closed, then marked ALLOW_CONNECTIONS false and renamed into
 * place: a template under its final name is complete and nobody can connect to it. Concurrent
 * clones are fine (each takes a share lock on the template). Builds are serialized by an
 * advisory lock in the `postgres` database, which every `npm test` on this server shares.
 */

const SERVER = `postgres://${process.env.PGUSER || userInfo().username}@127.0.0.1:5432`;
const TEMPLATE_PREFIX = "gwtest_template_";
const BUILD_LOCK = 0x6777_7470; // "gwtp"
/** A stale template (other migrations) is dropped only when no run has prepared it for this long: a run of another checkout may still be cloning it. */
const STALE_AFTER_MS = 60 * 60 * 1000;

/** `gwtest_template_<hash>`, the hash over the migration files' names and contents and the migrator. */
export function templateName(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(`${MIGRATIONS_DIR}/${file}`));
    hash.update("\0");
  }
  hash.update(readFileSync(sourcePath("shared", "platform", "db", "migrate.ts")));
  return `${TEMPLATE_PREFIX}${hash.digest("hex").slice(0, 16)}`;
}

async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end().catch(() => {});
  }
}

async function exists(admin: pg.Client, name: string): Promise<boolean> {
  return Boolean((await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount);
}

/** Marks the template as prepared now (a database comment), which keeps other runs from dropping it as stale. */
async function touch(admin: pg.Client, name: string, nowMs: number): Promise<void> {
  await admin.query(`COMMENT ON DATABASE ${name} IS '${new Date(nowMs).toISOString()}'`);
}

/** Builds the template for the current migrations when it does not exist; returns its name. */
export async function ensureTemplate(nowMs = Date.now()): Promise<string> {
  const name = templateName();
  const building = `${name}_build`;
  await withAdmin(async (admin) => {
    await admin.query("SELECT pg_advisory_lock($1)", [BUILD_LOCK]);
    try {
      if (!(await exists(admin, name))) {
        // A build that crashed half-way left this behind; under the lock nobody else is using it.
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${building}`);
        const pool = createPool(`${SERVER}/${building}`, 1);
        try {
          await migrate(pool);
        } finally {
          await pool.end();
        }
        await admin.query(`ALTER DATABASE ${building} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
      await touch(admin, name, nowMs);
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [BUILD_LOCK]).catch(() => {});
    }
  });
  return name;
}

/**
 * Drops the templates of other migrations that no run has prepared within STALE_AFTER_MS, and
 * builds that crashed half-way (under the build lock, nobody is building).
 */
export async function dropStaleTemplates(nowMs = Date.now()): Promise<string[]> {
  const current = templateName();
  return withAdmin(async (admin) => {
    await admin.query("SELECT pg_advisory_lock($1)", [BUILD_LOCK]);
    try {
      const found = await admin.query<{ datname: string; prepared: string | null }>(
        "SELECT datname, shobj_description(oid, 'pg_database') AS prepared FROM pg_database WHERE datname LIKE $1",
        [`${TEMPLATE_PREFIX}%`],
      );
      const dropped: string[] = [];
      for (const { datname, prepared } of found.rows) {
        const crashedBuild = datname.endsWith("_build");
        if (datname === current) continue;
        if (!crashedBuild && nowMs - (prepared ? Date.parse(prepared) : Number.NaN) < STALE_AFTER_MS) continue;
        try {
          await admin.query(`ALTER DATABASE ${datname} WITH IS_TEMPLATE false`);
          await admin.query(`DROP DATABASE IF EXISTS ${datname}${crashedBuild ? " WITH (FORCE)" : ""}`);
          dropped.push(datname);
        } catch {
          // Being cloned after all: the next run tries again.
        }
      }
      return dropped;
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [BUILD_LOCK]).catch(() => {});
    }
  });
}

/** A database for one test file, cloned from the migrated template, dropped at the end. */
export async function createTestDatabase(label: string): Promise<{ url: string; pool: Pool; drop(): Promise<void> }> {
  const name = `gwtest_${label
    .replace(/[^a-z0-9]/gi, "")
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(4).toString("hex")}`;
  const template = templateName();
  await withAdmin(async (admin) => {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } catch (error) {
      // 3D000: no template yet (a file run outside `vitest run`'s global setup) or dropped by
      // another checkout's run: build it and clone again.
      if ((error as { code?: string }).code !== "3D000") throw error;
      await ensureTemplate();
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    }
  });
  const url = `${SERVER}/${name}`;
  const pool = createPool(url, 5);
  return {
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
