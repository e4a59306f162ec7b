import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/gateway.js";
import { countedInPostgres, hammer, seedClientKey, startFaultGateway, type FaultGateway } from "./gateway.js";
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from "./services.js";

/**
 * PostgreSQL stopped under load: verify keeps answering from the Redis snapshots, writes
 * fail with a 5xx and a reason, and once PostgreSQL is back the usage actor catches up with
 * every call counted exactly once (the calls the ingress answered = PostgreSQL's totals).
 */

let redis: PrivateRedis;
let postgres: PrivatePostgres;
let gw: FaultGateway;
let seeded: Awaited<ReturnType<typeof seedClientKey>>;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([privateRedis(), privatePostgres()]);
  gw = await startFaultGateway(redis, postgres, ["usage"]);
  seeded = await seedClientKey(gw);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

describe("PostgreSQL stopped", () => {
  it("verify answers from snapshots, writes fail with a 5xx and a reason, and usage catches up exactly once", async () => {
    const body = { key: seeded.key, domain: "faults.example" };
    const warm = await hammer(gw.url, body, () => false, { workers: 4, maxCalls: 100 });
    expect(warm.every((o) => o.authorized === true)).toBe(true);

    await postgres.halt();
    const during = await hammer(gw.url, body, () => false, { workers: 8, maxCalls: 2_000 });
    // Every call answered from snapshots: PostgreSQL is not on the hot path.
    expect(during.filter((o) => o.authorized !== true).slice(0, 3)).toEqual([]);

    const write = await gw.admin("POST", "/orgs", { name: "During the outage" });
    expect(write.status).toBeGreaterThanOrEqual(500);
    expect(typeof write.body.reason).toBe("string");
    expect(write.body.ok).toBe(false);

    await postgres.start();
    const answered = warm.length + during.length;
    // The usage actor retried while PostgreSQL was away: everything arrives, nothing twice.
    await waitFor(async () => (await countedInPostgres(gw.databaseUrl, seeded.keyId).catch(() => 0)) >= answered, 60_000, 250).catch(
      async (error: Error) => {
        const counted = await countedInPostgres(gw.databaseUrl, seeded.keyId).catch(() => -1);
        throw new Error(
          `${error.message}: ${counted} of ${answered} counted; usage actor said:\n${gw.roles.get("usage")?.output().slice(-4_000)}`,
        );
      },
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await countedInPostgres(gw.databaseUrl, seeded.keyId)).toBe(answered);
    const org = await gw.admin("GET", `/orgs/${seeded.orgId}`);
    expect(org.body.org.used).toBe(answered);
  }, 120_000);
});
