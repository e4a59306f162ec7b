import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/gateway.js";
import { countedInPostgres, hammer, seedClientKey, startFaultGateway, type FaultGateway, type Outcome } from "./gateway.js";
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from "./services.js";

/**
 * Redis lost under load (docs/operations.md "What a failure costs"): verify never answers a
 * wrong `authorized` (a refusal where the key is good), answers a prompt 5xx while Redis is
 * gone, and is correct again by itself within seconds; the usage actor resumes.
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

const good = () => ({ key: seeded.key, domain: "faults.example" });

/** Every answer is either a good 200 or a fault (5xx or no connection) without an `authorized` field. */
function expectNoWrongAnswer(outcomes: Outcome[]): void {
  const wrong = outcomes.filter(
    (o) => !(o.status === 200 && o.authorized === true) && !(o.status === 0 || (o.status >= 500 && o.authorized === undefined)),
  );
  expect(wrong.slice(0, 5)).toEqual([]);
}

describe("Redis flushed under load", () => {
  it("never refuses a good key, is correct again within seconds, and restores the cycle counter from PostgreSQL", async () => {
    let phase: "before" | "after" | "done" = "before";
    let flushedAt = 0;
    const load = hammer(gw.url, good(), () => phase === "done", { workers: 8 });
    await new Promise((r) => setTimeout(r, 1_500));
    // What the usage actor had applied before the flush survives it (PostgreSQL is the truth).
    const appliedBefore = await countedInPostgres(gw.databaseUrl, seeded.keyId);
    await redis.client().flushall();
    flushedAt = Date.now();
    phase = "after";
    // Correct again by itself: a good answer after the flush.
    await waitFor(
      async () => {
        const r = await fetch(`${gw.url}/api/v1/verify.php`, { method: "POST", body: JSON.stringify(good()) });
        return r.status === 200 && ((await r.json()) as { authorized?: boolean }).authorized === true;
      },
      15_000,
      50,
    );
    const recoveredMs = Date.now() - flushedAt;
    await new Promise((r) => setTimeout(r, 1_000));
    phase = "done";
    const outcomes = await load;
    expectNoWrongAnswer(outcomes);
    expect(recoveredMs).toBeLessThan(15_000);
    expect(outcomes.filter((o) => o.authorized === true).length).toBeGreaterThan(50);

    // The organization's cycle counter came back from PostgreSQL: at least what was applied before.
    const org = await gw.admin("GET", `/orgs/${seeded.orgId}`);
    expect(org.status).toBe(200);
    expect(org.body.org.used).toBeGreaterThanOrEqual(appliedBefore);
  }, 60_000);
});

describe("Redis killed and restarted under load", () => {
  it("answers prompt faults while it is down, recovers by itself, and the usage actor counts again", async () => {
    let stop = false;
    const load = hammer(gw.url, good(), () => stop, { workers: 8 });
    await new Promise((r) => setTimeout(r, 1_000));
    await redis.kill();
    // Down for three seconds of load.
    await new Promise((r) => setTimeout(r, 3_000));
    await redis.start();
    await waitFor(
      async () => {
        const r = await fetch(`${gw.url}/api/v1/verify.php`, { method: "POST", body: JSON.stringify(good()) });
        return r.status === 200;
      },
      20_000,
      100,
    );
    stop = true;
    const outcomes = await load;
    expectNoWrongAnswer(outcomes);
    // Answers while it was down were faults, and prompt (no call hung until the client gave up).
    const during = outcomes.filter((o) => o.status !== 200);
    expect(during.length).toBeGreaterThan(0);
    expect(Math.max(...during.map((o) => o.ms))).toBeLessThan(5_000);

    // Actors resume: calls made now reach PostgreSQL through the usage actor.
    const before = await countedInPostgres(gw.databaseUrl, seeded.keyId);
    const after = await hammer(gw.url, good(), () => false, { workers: 4, maxCalls: 200 });
    const ok = after.filter((o) => o.authorized === true).length;
    expect(ok).toBe(200);
    await waitFor(async () => (await countedInPostgres(gw.databaseUrl, seeded.keyId)) >= before + ok, 30_000, 200);
    // Both processes are still the ones started: nothing crashed.
    for (const role of gw.roles.values()) expect(role.process.exitCode).toBeNull();
  }, 90_000);
});
