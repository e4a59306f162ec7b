import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../actors/index.js";
import { startUsage } from "../../../actors/usage/index.js";
import { loadScript, runScript } from "../../../shared/platform/redis/scripts.js";
import { PENDING_INSTALL_RETENTION_MS } from "../../../shared/verify/index.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, verify, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * Pending installations the owner did not decide on within 30 days of their first call are
 * forgotten (shared/verify/stale-installations.ts): a stranger holding the client key can name
 * 20 new ones a day, and without an end each would stay a Redis entry, a row and a notice for good.
 * The usage actor's timer does it, as in production (it runs when the test clock moves).
 */

let gw: TestGateway;
let usage: RunningActor;
let made: MadeKey;

beforeAll(async () => {
  gw = await startTestGateway("staleinstalls");
  usage = await startUsage(gw.ctx);
  made = await clientSetup(gw, {}, { plan: "professional" });
});

afterAll(async () => {
  await usage?.stop();
  await gw?.stop();
});

const call = async (install: string) => (await verify(gw, { key: made.key, domain: "example.com", install })).body.reason as string;

async function rows(): Promise<Record<string, string>> {
  const { rows } = await gw.ctx.db.query<{ install: string; status: string }>(
    "SELECT install, status FROM installations WHERE key_id = $1 ORDER BY install",
    [made.id],
  );
  return Object.fromEntries(rows.map((r) => [r.install, r.status]));
}

async function noticed(): Promise<string[]> {
  const { rows } = await gw.ctx.db.query<{ install: string }>(
    "SELECT install FROM installation_notices WHERE key_id = $1 ORDER BY install",
    [made.id],
  );
  return rows.map((r) => r.install);
}

const inRedis = async () => gw.ctx.redis.hgetall(gw.ctx.keys.installations(made.orgId, made.id));

async function lastSeen(install: string): Promise<number> {
  const { rows } = await gw.ctx.db.query<{ at: Date }>("SELECT last_seen_at AS at FROM installations WHERE key_id = $1 AND install = $2", [
    made.id,
    install,
  ]);
  return rows[0]?.at.getTime() ?? 0;
}

describe("stale pending installations", () => {
  it("are forgotten 30 days after their first call unless the owner decided; the site's own and the owner's decisions stay", async () => {
    expect(await call("site")).toBe("ok");
    for (const name of ["quiet", "busy", "blocked"]) expect(await call(name)).toBe("installation_pending");
    await waitFor(async () => Object.keys(await rows()).length === 4 && (await noticed()).length === 3);
    const blocked = await gw.admin("POST", `/keys/${made.id}/installations/blocked/block`);
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);

    // Twenty days on, "busy" calls again: seen later, but still first seen twenty days ago.
    await advance(gw, 20 * 86_400);
    const before = await lastSeen("busy");
    expect(await call("busy")).toBe("installation_pending");
    await waitFor(async () => (await lastSeen("busy")) > before);
    expect(Object.keys(await rows())).toHaveLength(4);

    // Thirty days and a minute after the first calls: both pending names are forgotten, everywhere
    // (a stranger calling each name now and then cannot keep it).
    await advance(gw, PENDING_INSTALL_RETENTION_MS / 1000 - 20 * 86_400 + 60);
    await waitFor(async () => (await rows()).quiet === undefined && (await rows()).busy === undefined);
    expect(await rows()).toEqual({ site: "approved", blocked: "blocked" });
    expect(await inRedis()).toEqual({ site: "approved", blocked: "blocked" });
    expect(await noticed()).toEqual(["blocked"]);

    // Called again, it is a new installation: recorded pending, its row and notice back (the owner is reminded).
    expect(await call("busy")).toBe("installation_pending");
    await waitFor(async () => (await rows()).busy === "pending" && (await noticed()).includes("busy"));
    expect((await inRedis()).busy).toBe("pending");
    expect(await call("site")).toBe("ok");
    expect(await call("blocked")).toBe("installation_blocked");
  }, 60_000);

  it("never empties a key's hash: an empty one would approve the next stranger's name", async () => {
    const hash = gw.ctx.keys.installations(made.orgId, 999_999);
    await gw.ctx.redis.hset(hash, "a", "pending", "b", "pending");
    const removed = await runScript(gw.ctx.redis, loadScript("installation-forget-1.lua"), [hash], ["a", "b", "c"]);
    expect(removed).toBe(1);
    expect(await gw.ctx.redis.hlen(hash)).toBe(1);
  });
});
