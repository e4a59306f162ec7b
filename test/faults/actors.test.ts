import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/gateway.js";
import { countedInPostgres, hammer, seedClientKey, startFaultGateway, type FaultGateway } from "./gateway.js";
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from "./services.js";

/**
 * An actor SIGKILLed mid-message: the other consumer of its group claims the dead one's
 * pending entries (XAUTOCLAIM after claimIdleMs) and finishes them; nothing is counted twice.
 */

let redis: PrivateRedis;
let postgres: PrivatePostgres;
let gw: FaultGateway;
let seeded: Awaited<ReturnType<typeof seedClientKey>>;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([privateRedis(), privatePostgres()]);
  gw = await startFaultGateway(redis, postgres, [], { ACTOR_CLAIM_IDLE_MS: "2000" });
  // Two usage consumers side by side (each `start` is its own process).
  await gw.start("usage");
  gw.roles.set("usage-a", gw.roles.get("usage") as NonNullable<ReturnType<typeof gw.roles.get>>);
  gw.roles.set("usage-b", await gw.start("usage"));
  seeded = await seedClientKey(gw);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

describe("usage actor SIGKILLed under load", () => {
  it("the surviving consumer finishes its work: every call counted exactly once", async () => {
    let stop = false;
    const load = hammer(gw.url, { key: seeded.key, domain: "faults.example" }, () => stop, { workers: 8 });
    await new Promise((r) => setTimeout(r, 1_500));
    const victim = gw.roles.get("usage-b");
    expect(victim).toBeDefined();
    victim?.process.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    const outcomes = await load;
    const answered = outcomes.filter((o) => o.authorized === true).length;
    expect(answered).toBe(outcomes.length);
    // Claimed by the survivor after ACTOR_CLAIM_IDLE_MS (2 s here; 30 s by default).
    await waitFor(async () => (await countedInPostgres(gw.databaseUrl, seeded.keyId)) >= answered, 90_000, 500);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await countedInPostgres(gw.databaseUrl, seeded.keyId)).toBe(answered);
  }, 150_000);
});
