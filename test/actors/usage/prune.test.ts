import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPLIED_RETENTION_MS, pruneApplied } from "../../../actors/usage/handler.js";
import { createTestDatabase } from "../../helpers/database.js";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase("prune");
});
afterAll(async () => {
  await db?.drop();
});

describe("usage markers", () => {
  it("are pruned past the retention, in batches, and kept within it", async () => {
    const now = Date.UTC(2026, 10, 21);
    const old = now - APPLIED_RETENTION_MS - 1000;
    const recent = now - 1000;
    await db.pool.query(
      `INSERT INTO usage_applied (stream, message_id, applied_at)
       SELECT 's', 'old-' || g, to_timestamp($1 / 1000.0) FROM generate_series(1, 25) g
       UNION ALL SELECT 's', 'new-' || g, to_timestamp($2 / 1000.0) FROM generate_series(1, 5) g`,
      [old, recent],
    );
    expect(await pruneApplied(db.pool, now, 10)).toBe(25);
    const { rows } = await db.pool.query("SELECT message_id FROM usage_applied ORDER BY message_id");
    expect(rows.map((r) => r.message_id)).toEqual(["new-1", "new-2", "new-3", "new-4", "new-5"]);
    expect(await pruneApplied(db.pool, now, 10)).toBe(0);
  });
});
