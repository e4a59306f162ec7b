import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transaction } from "../../../shared/platform/db/pool.js";
import { createTestDatabase } from "../../helpers/database.js";

/**
 * A PostgreSQL connection cut under a checked-out client (a restart, a failover) reaches the
 * caller as a failed query and never as an unhandled 'error' event, which would end the
 * process: found when the fault suite stopped PostgreSQL under the usage actor.
 */

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase("pool");
});
afterAll(async () => {
  await db?.drop();
});

describe("createPool", () => {
  it("a checked-out client whose connection is cut: the query fails, the process lives, the pool serves on", async () => {
    const cut = transaction(db.pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      // Terminated from another connection while this one is idle inside its transaction.
      await db.pool.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.query("SELECT 1");
    });
    await expect(cut).rejects.toThrow();
    const { rows } = await db.pool.query<{ one: number }>("SELECT 1 AS one");
    expect(rows[0].one).toBe(1);
  });
});
