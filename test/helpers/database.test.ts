import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { userInfo } from "node:os";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "../../shared/platform/db/migrate.js";
import { createTestDatabase, dropStaleTemplates, ensureTemplate, templateName } from "./database.js";

const SERVER = `postgres://${process.env.PGUSER || userInfo().username}@127.0.0.1:5432`;
const db = await createTestDatabase("tplclone");

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

afterAll(() => db.drop());

describe("test databases cloned from the migrated template", () => {
  it("a clone has every migration applied and recorded", async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
    const ledger = await db.pool.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
    expect(ledger.rows.map((r) => r.name)).toEqual(files);
  });

  it("the template is named by the migrations' hash and refuses connections, so a clone never finds it busy", async () => {
    expect(await ensureTemplate()).toBe(templateName());
    expect(templateName()).toMatch(/^gwtest_template_[0-9a-f]{16}$/);
    const client = new pg.Client({ connectionString: `${SERVER}/${templateName()}` });
    await expect(client.connect()).rejects.toThrow(/not currently accepting connections/);
  });

  it("drops another migrations' template once no run has prepared it for an hour, keeps a recent one", async () => {
    const now = Date.now();
    const old = `gwtest_template_old${randomBytes(4).toString("hex")}`;
    const recent = `gwtest_template_new${randomBytes(4).toString("hex")}`;
    await admin(async (client) => {
      await client.query(`CREATE DATABASE ${old}`);
      await client.query(`COMMENT ON DATABASE ${old} IS '${new Date(now - 2 * 3600_000).toISOString()}'`);
      await client.query(`CREATE DATABASE ${recent}`);
      await client.query(`COMMENT ON DATABASE ${recent} IS '${new Date(now - 60_000).toISOString()}'`);
    });
    try {
      const dropped = await dropStaleTemplates(now);
      expect(dropped).toContain(old);
      expect(dropped).not.toContain(recent);
      expect(dropped).not.toContain(templateName());
    } finally {
      await admin(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${old}`);
        await client.query(`DROP DATABASE IF EXISTS ${recent}`);
      });
    }
  });
});
