import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIngress } from "../../ingress/main.js";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext, type Context } from "../../shared/platform/context.js";
import { insertEvent } from "../../shared/events/db/events.js";
import { silentLogger } from "../../shared/platform/log.js";
import { ADMIN_TOKEN, startTestGateway, TEST_SECRET, type TestGateway } from "../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain } from "./routes/verify-fixtures.js";

/**
 * DATABASE_READ_URL: the read-only endpoints read through their own pool. The "replica" here
 * is the primary under another application_name, so the test sees which connection a read
 * used (pg_stat_activity) and that the answer is the same.
 */

let gw: TestGateway;
let ctx: Context;
let url: string;
let stopSecond: () => Promise<void>;
let serverKey: string;

beforeAll(async () => {
  gw = await startTestGateway("readrep");
  const orgId = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, "example.com");
  serverKey = (await makeKey(gw, orgId, { name: "SIEM", kind: "server", domain: undefined, rate_per_minute: 100_000 })).key;
  await insertEvent(gw.ctx.db, {
    orgId,
    type: "scan.completed",
    timeMs: gw.ctx.clock.now(),
    domain: "example.com",
    payload: { kind: "web", grade: "B", score: 70, fail_count: 1 },
  });
  const primary = gw.ctx.config.databaseUrl;
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    REDIS_PREFIX: gw.ctx.keys.prefix,
    DATABASE_URL: primary,
    DATABASE_READ_URL: `${primary}${primary.includes("?") ? "&" : "?"}application_name=gateway_read_replica`,
    ADMIN_TOKEN,
    GATEWAY_SECRET: TEST_SECRET,
    GATEWAY_TEST_CLOCK: "1",
    GATEWAY_ENV: "production",
    LOG_LEVEL: "silent",
  });
  ctx = await openContext(config, "test-read", { logger: silentLogger() });
  const second = await startIngress(ctx);
  url = `http://127.0.0.1:${second.port}`;
  stopSecond = async () => {
    await second.stop();
    await ctx.close();
  };
});

afterAll(async () => {
  await stopSecond?.();
  await gw?.stop();
});

describe("DATABASE_READ_URL", () => {
  it("events.php reads through the replica's pool and answers as the primary would", async () => {
    expect(ctx.readDb).not.toBe(ctx.db);
    const query = `?${new URLSearchParams({ key: serverKey, domain: "example.com" })}`;
    const viaReplica = await fetch(`${url}/api/v1/events.php${query}`);
    expect(viaReplica.status).toBe(200);
    const direct = await fetch(`${gw.url}/api/v1/events.php${query}`);
    const text = await viaReplica.text();
    expect(text).toContain('"scan.completed"');
    expect(text).toBe(await direct.text());
    const { rows } = await gw.ctx.db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'gateway_read_replica' AND datname = current_database()",
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it("without it the read pool is the primary's", () => {
    expect(gw.ctx.readDb).toBe(gw.ctx.db);
  });
});
