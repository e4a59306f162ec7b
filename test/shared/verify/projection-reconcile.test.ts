import { type ChildProcess, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, verify } from "../../ingress/routes/verify-fixtures.js";
import { freePort } from "../../../shared/platform/net/free-port.js";

/**
 * Projection that cannot silently fail (docs/security.md, item 3): PostgreSQL commits a
 * revocation, Redis refuses the write, Redis comes back: the key is refused within
 * seconds with no admin retry. The gateway runs on a Redis of its own (a free port),
 * made to refuse writes with min-replicas-to-write; the shared Redis is never touched.
 */

let redisServer: ChildProcess;
let control: Redis;
let gw: TestGateway;

beforeAll(async () => {
  const port = await freePort();
  redisServer = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
    { stdio: "ignore" },
  );
  control = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 1 });
  control.on("error", () => {});
  await waitFor(async () => (await control.ping().catch(() => null)) === "PONG", 10_000);
  gw = await startTestGateway("reconcile", { REDIS_URL: `redis://127.0.0.1:${port}` });
}, 30_000);
afterAll(async () => {
  await gw?.stop();
  control?.disconnect();
  redisServer?.kill("SIGTERM");
});

const refuseWrites = (on: boolean) => control.config("SET", "min-replicas-to-write", on ? "1" : "0");

describe("projection to Redis", () => {
  it("a revocation whose Redis write failed reaches Redis once it is back, without any admin retry", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    await refuseWrites(true);
    try {
      const revoked = await gw.admin("POST", `/keys/${made.id}/revoke`);
      expect(revoked.status).toBe(500);
    } finally {
      await refuseWrites(false);
    }
    const answer = await waitFor(async () => {
      const v = await verify(gw, { key: made.key, domain: "example.com" });
      return v.status === 401 ? v : null;
    }, 5000);
    expect(answer.body.reason).toBe("invalid_key");
    // The projector writes Redis, then clears the mark: the mark may outlive the write by a moment.
    const owed = async () => (await gw.ctx.db.query("SELECT * FROM projection_pending")).rows;
    await waitFor(async () => (await owed()).length === 0, 5000).catch(() => undefined);
    expect(await owed()).toEqual([]);
  });

  it("an installation blocked while Redis refused the write is refused once Redis is back, without any admin retry", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "shop-a" })).body.reason).toBe("ok");
    await refuseWrites(true);
    try {
      const blocked = await gw.admin("POST", `/keys/${made.id}/installations/shop-a/block`);
      expect(blocked.status).toBe(500);
    } finally {
      await refuseWrites(false);
    }
    const answer = await waitFor(async () => {
      const v = await verify(gw, { key: made.key, domain: "example.com", install: "shop-a" });
      return v.body.reason === "installation_blocked" ? v : null;
    }, 5000);
    expect(answer.status).toBe(403);
    const owed = async () => (await gw.ctx.db.query("SELECT * FROM projection_pending")).rows;
    await waitFor(async () => (await owed()).length === 0, 5000).catch(() => undefined);
    expect(await owed()).toEqual([]);
  });

  it("a retry of a revocation or a deletion re-projects before answering 404", async () => {
    const made = await clientSetup(gw);
    expect((await gw.admin("PUT", `/orgs/${made.orgId}/secrets/api_token`, { value: "s3cret" })).status).toBe(200);
    await refuseWrites(true);
    try {
      expect((await gw.admin("POST", `/keys/${made.id}/revoke`)).status).toBe(500);
      expect((await gw.admin("DELETE", `/orgs/${made.orgId}/secrets/api_token`)).status).toBe(500);
    } finally {
      await refuseWrites(false);
    }
    expect((await gw.admin("POST", `/keys/${made.id}/revoke`)).status).toBe(404);
    expect((await gw.admin("DELETE", `/orgs/${made.orgId}/secrets/api_token`)).status).toBe(404);
    // Right after the 404s (not waiting on the reconcile loop): Redis holds neither.
    expect(await gw.ctx.redis.exists(gw.ctx.keys.keySnapshot(made.orgId, made.id))).toBe(0);
    expect(await gw.ctx.redis.hexists(gw.ctx.keys.secretSnapshot(made.orgId), "api_token")).toBe(0);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("invalid_key");
  });
});
