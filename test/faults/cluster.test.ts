import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineActor, runActor } from "../../actors/runtime/index.js";
import { publish } from "../../shared/platform/streams/envelope.js";
import { sharedTestClock, systemClock } from "../../shared/platform/clock.js";
import { silentLogger } from "../../shared/platform/log.js";
import {
  createRedis,
  deleteMatching,
  duplicateRedis,
  isCluster,
  masters,
  scanKeys,
  type Redis,
} from "../../shared/platform/redis/client.js";
import { SHARD_TAGS, SHARDS, createKeys, shardOf } from "../../shared/platform/redis/keys.js";
import { startDnsServer, type FixtureDns } from "../fixtures/scanner/dns-server.js";
import { startWebServers, type FixtureWeb } from "../fixtures/scanner/web-servers.js";
import { waitFor } from "../helpers/gateway.js";
import { startCountingHttp } from "../fixtures/siem/collectors.js";
import { insertEvent } from "../../shared/events/index.js";
import { seedClientKey, startFaultGateway, type FaultGateway } from "./gateway.js";
import { privatePostgres, privateRedisCluster, type PrivatePostgres, type PrivateRedisCluster } from "./services.js";

/**
 * The gateway on a real Redis Cluster: three masters (Debian's redis-server in cluster
 * mode on loopback ports), the ingress, TWO usage actors side by side and the scanner, each
 * its own OS process. Verify counts for keys of organizations on every shard, so the
 * counting script runs on every master; PostgreSQL's totals must equal the calls exactly.
 * A scan crosses the cluster as request (stream) and reply (list); a key change is
 * projected (snapshot, key index and pub/sub across nodes) and takes effect at once.
 */

let cluster: PrivateRedisCluster;
let postgres: PrivatePostgres;
let dns: FixtureDns;
let web: FixtureWeb;
let gw: FaultGateway;
let redis: Redis;
let db: pg.Pool;
const keys = createKeys("gw:");

interface Seeded {
  orgId: number;
  keyId: number;
  key: string;
  domain: string;
}
const seeded: Seeded[] = [];
const onTeardown: (() => void)[] = [];

async function verify(key: string, domain: string): Promise<{ status: number; body: { authorized?: boolean; reason?: string } }> {
  const response = await fetch(`${gw.url}/api/v1/verify.php`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key, domain }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as { authorized?: boolean; reason?: string } };
}

async function countedByKey(): Promise<Map<number, number>> {
  const { rows } = await db.query<{ key_id: number; n: string }>(
    "SELECT key_id, sum(counted)::bigint AS n FROM usage_daily GROUP BY key_id",
  );
  return new Map(rows.map((r) => [r.key_id, Number(r.n)]));
}

beforeAll(async () => {
  [cluster, postgres, dns, web] = await Promise.all([privateRedisCluster(3), privatePostgres(), startDnsServer(), startWebServers()]);
  const caFile = join(tmpdir(), `faults-cluster-ca-${process.pid}.pem`);
  await writeFile(caFile, web.caPem);
  // The ingress and the first usage actor name the cluster by REDIS_URL's redis+cluster:// form ...
  gw = await startFaultGateway({ url: cluster.url }, postgres, [], {
    ACTOR_CLAIM_IDLE_MS: "2000",
    // The scanner's private reach is for tests only (not with GATEWAY_ENV=production).
    GATEWAY_ENV: "test",
    SCAN_ALLOW_PRIVATE: "1",
    // The SIEM collector of the last test listens on loopback.
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_HTTP_PORT: String(web.httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
    SCAN_CA_FILE: caFile,
  });
  await gw.start("usage", "usage-a");
  // ... the second usage actor and the scanner by REDIS_CLUSTER.
  gw.env.REDIS_URL = "";
  gw.env.REDIS_CLUSTER = cluster.seeds;
  await gw.start("usage", "usage-b");
  await gw.start("scanner");
  redis = createRedis(cluster.url, "cluster-test");
  redis.on("error", () => {});
  db = new pg.Pool({ connectionString: gw.databaseUrl, max: 2 });
  db.on("error", () => {});
  // Six organizations (ids 1-6): every shard, so every master, holds some.
  for (let i = 1; i <= 6; i++) {
    const domain = `org${i}.example`;
    seeded.push({ ...(await seedClientKey(gw, domain)), domain });
  }
  // A second key in one organization: counts are kept per key within one shard too.
  const extra = await gw.admin("POST", `/orgs/${seeded[0].orgId}/keys`, {
    name: "second",
    kind: "client",
    domain: seeded[0].domain,
    rate_per_minute: 1_000_000,
  });
  expect(extra.status, JSON.stringify(extra.body)).toBe(201);
  seeded.push({ orgId: seeded[0].orgId, keyId: extra.body.details.id as number, key: extra.body.key as string, domain: seeded[0].domain });
}, 120_000);

afterAll(async () => {
  for (const teardown of onTeardown) teardown();
  redis?.disconnect();
  await db?.end();
  await gw?.stop();
  await Promise.all([cluster?.stop(), postgres?.stop(), dns?.stop(), web?.stop()]);
});

describe("the gateway on a 3-master Redis Cluster", () => {
  it("connects as a cluster client and spreads the organizations' shards over the masters", async () => {
    expect(isCluster(redis)).toBe(true);
    expect((await masters(redis)).length).toBe(3);
    expect(new Set(seeded.map((s) => shardOf(s.orgId))).size).toBe(6);
  });

  it("counts every verify call exactly once, per key, with two usage actors sharing the shards' streams", async () => {
    const perKey = 60;
    const calls = seeded.flatMap((s) => Array.from({ length: perKey }, () => s));
    const answers: { status: number; authorized?: boolean; reason?: string }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < calls.length) {
          const call = calls[next++];
          const { status, body } = await verify(call.key, call.domain);
          answers.push({ status, authorized: body.authorized, reason: body.reason });
        }
      }),
    );
    expect(answers.filter((a) => a.status !== 200 || a.authorized !== true)).toEqual([]);
    const total = calls.length;

    await waitFor(async () => [...(await countedByKey()).values()].reduce((a, b) => a + b, 0) >= total, 60_000, 250);
    // A moment more: anything counted twice would show up now.
    await new Promise((r) => setTimeout(r, 1_500));
    const counted = await countedByKey();
    expect([...counted.values()].reduce((a, b) => a + b, 0)).toBe(total);
    for (const s of seeded) expect(counted.get(s.keyId), `key ${s.keyId}`).toBe(perKey);

    // Both usage processes joined the group on every shard's stream, and nothing is left pending.
    const consumers = new Set<string>();
    for (let shard = 0; shard < SHARDS; shard++) {
      const stream = keys.usageStream(shard);
      // XINFO CONSUMERS: one flat [field, value, ...] list per consumer.
      for (const fields of (await redis.xinfo("CONSUMERS", stream, "usage")) as string[][])
        consumers.add(String(fields[fields.indexOf("name") + 1]));
      const summary = (await redis.xpending(stream, "usage")) as [number, ...unknown[]];
      expect(Number(summary[0]), stream).toBe(0);
    }
    expect(consumers.size).toBe(2);
  }, 120_000);

  it("holds keys on more than one master: the shards' data really is distributed", async () => {
    const perMaster: { port: number; shardKeys: number; streams: string[] }[] = [];
    for (const port of cluster.ports) {
      const node = cluster.node(port);
      let shardKeys = 0;
      const streams: string[] = [];
      let cursor = "0";
      do {
        const [nextCursor, found] = await node.scan(cursor, "MATCH", "gw:{s*", "COUNT", 1000);
        cursor = nextCursor;
        shardKeys += found.length;
        streams.push(...found.filter((k) => k.endsWith(":stream:usage")));
      } while (cursor !== "0");
      perMaster.push({ port, shardKeys, streams });
    }
    // Organizations 1-6 are shards 1-6, in slots 8320, 4224, 12416, 2176, 10368, 6272: all three slot ranges.
    expect(perMaster.filter((m) => m.shardKeys > 0).length).toBe(3);
    expect(perMaster.map((m) => m.streams.length).sort()).toEqual([21, 21, 22]);
    expect(perMaster.flatMap((m) => m.streams).sort()).toEqual(Array.from({ length: SHARDS }, (_, s) => keys.usageStream(s)).sort());
  });

  it("answers scan.php through the scanner: request on a stream, reply on a list, across the cluster", async () => {
    const { orgId } = seeded[1];
    const verified = await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "good.test", verified: true });
    expect(verified.status, JSON.stringify(verified.body)).toBeLessThan(300);
    const made = await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "backend", kind: "server" });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const response = await fetch(`${gw.url}/api/v1/scan.php`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: made.body.key, domain: "good.test" }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await response.json()) as {
      ok?: boolean;
      fresh?: boolean;
      domain?: string;
      web?: { grade?: string };
      dns?: { grade?: string };
    };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ ok: true, fresh: true, domain: "good.test" });
    expect(typeof body.web?.grade).toBe("string");
    expect(typeof body.dns?.grade).toBe("string");
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM scans WHERE org_id = $1 AND domain = 'good.test'", [
      orgId,
    ]);
    expect(rows[0].n).toBe(2);
  }, 90_000);

  it("projects a key change to the cluster: the next call is judged by it, and the change is published", async () => {
    const s = seeded[2];
    const subscriber = duplicateRedis(redis);
    subscriber.on("error", () => {});
    const published: string[] = [];
    subscriber.on("message", (_channel: string, message: string) => published.push(message));
    await subscriber.subscribe(keys.snapshotChannel());
    onTeardown.push(() => subscriber.disconnect());
    expect((await verify(s.key, s.domain)).body.authorized).toBe(true);
    const denied = await gw.admin("PATCH", `/keys/${s.keyId}`, { ip_deny: ["127.0.0.0/8"] });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    expect((await verify(s.key, s.domain)).body).toMatchObject({ authorized: false, reason: "ip_blocked" });
    await gw.admin("PATCH", `/keys/${s.keyId}`, { ip_deny: [] });
    expect((await verify(s.key, s.domain)).body.authorized).toBe(true);
    const suspended = await gw.admin("POST", `/keys/${s.keyId}/suspend`);
    expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
    expect((await verify(s.key, s.domain)).body).toMatchObject({ authorized: false, reason: "key_suspended" });
    await gw.admin("POST", `/keys/${s.keyId}/revoke`);
    expect((await verify(s.key, s.domain)).body.authorized).toBe(false);
    await waitFor(() => published.filter((m) => m === JSON.stringify({ type: "key", id: s.keyId })).length >= 4, 5_000, 50);
  }, 60_000);
});

describe("a master restarted empty (no replica, no persistence)", () => {
  it("never answers a wrong refusal: its shards' sentinels went with their data, so the gateway rebuilds", async () => {
    const live = seeded.filter((_, i) => i !== 2); // seeded[2]'s key was revoked above
    for (const s of live) expect((await verify(s.key, s.domain)).body.authorized).toBe(true);
    // The master holding shard 1 (organization 1, and its share of the key index).
    let victim: number | null = null;
    for (const port of cluster.ports) {
      const [, found] = await cluster.node(port).scan("0", "MATCH", `gw:{${SHARD_TAGS[1]}}:*`, "COUNT", 10_000);
      if (found.length > 0) victim = port;
    }
    expect(victim).not.toBeNull();

    // Callers keep calling through the restart; every answer is recorded.
    const wrong: string[] = [];
    let faults = 0;
    let answered = 0;
    const round = async () => {
      const answers = await Promise.all(
        live.map((s) => verify(s.key, s.domain).catch(() => ({ status: 0, body: {} as { authorized?: boolean } }))),
      );
      for (const a of answers) {
        answered++;
        if (a.status >= 500 || a.status === 0) faults++;
        else if (a.status !== 200 || a.body.authorized !== true) wrong.push(JSON.stringify(a));
      }
      return answers.every((a) => a.status === 200 && a.body.authorized === true);
    };
    let restarted = false;
    const callers = (async () => {
      while (!restarted) await round();
    })();
    const restartedAt = Date.now();
    await cluster.restart(victim as number);
    restarted = true;
    await callers;
    await waitFor(round, 30_000, 100);
    expect(wrong).toEqual([]);
    // Rebuilt after the restart: every sentinel is back, the lost shard's written since.
    for (const sentinel of keys.snapshotSentinels()) expect(await redis.exists(sentinel), sentinel).toBe(1);
    expect(Number(await redis.get(keys.snapshotSentinel(1)))).toBeGreaterThanOrEqual(restartedAt);
    console.log(`master restarted empty: ${answered} calls during and after the restart, ${faults} answered 5xx, none refused`);
  }, 60_000);
});

describe("the runtime on a Redis Cluster, in process", () => {
  const prefix = "rt:";
  const rtKeys = createKeys(prefix);

  it("reads the streams of every shard's slot, and stop() ends every reader's blocking read at once (CLIENT UNBLOCK per node)", async () => {
    const seen: number[] = [];
    // The usage actor's layout: one stream per shard tag, so one per slot, on different masters.
    const actor = defineActor<{ n: number }>({
      name: "cluster-probe",
      group: "probe",
      streams: (k) => Array.from({ length: SHARDS }, (_, shard) => k.usageStream(shard)),
      schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      // A read blocks far longer than the drain may take: only CLIENT UNBLOCK lets stop() drain.
      blockMs: 120_000,
      drainTimeoutMs: 5_000,
      handler: async (message) => {
        seen.push(message.n);
      },
    });
    const handle = await runActor(actor, { redis, keys: rtKeys, clock: systemClock(), logger: silentLogger(), consumerName: "probe-1" });
    for (let shard = 0; shard < SHARDS; shard++)
      await publish(redis, rtKeys.usageStream(shard), { n: shard }, { registry: rtKeys.streamRegistry() });
    await waitFor(() => seen.length === SHARDS, 10_000, 20);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: SHARDS }, (_, shard) => shard));
    expect(await handle.stop()).toEqual({ drained: true, abandoned: 0 });
    // The registry names every stream (SADD beside each XADD, across nodes).
    expect((await redis.smembers(rtKeys.streamRegistry())).sort()).toEqual(
      Array.from({ length: SHARDS }, (_, s) => rtKeys.usageStream(s)).sort(),
    );
    let found = 0;
    for await (const batch of scanKeys(redis, `${prefix}*`)) found += batch.length;
    expect(found).toBe(SHARDS + 1);
    await deleteMatching(redis, `${prefix}*`);
    for await (const batch of scanKeys(redis, `${prefix}*`)) expect(batch).toEqual([]);
  }, 60_000);

  it("delivers SIEM events: the fan-out's append and the loop's read run with their side keys in the stream's slot", async () => {
    const collector = await startCountingHttp();
    onTeardown.push(() => void collector.close());
    await gw.start("outbox");
    await gw.start("siem");
    const orgId = seeded[1].orgId;
    const created = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url: `${collector.url}/cluster` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const stream = keys.stream(`events:siem:${created.body.destination.id as number}`);
    const ids: number[] = [];
    const client = await db.connect();
    try {
      for (let batch = 0; batch < 6; batch++) {
        await client.query("BEGIN");
        for (let i = 0; i < 50; i++) {
          const payload = { kind: "web", grade: "B", score: 80, fail_count: 1 } as const;
          ids.push(await insertEvent(client, { orgId, type: "scan.completed", timeMs: Date.now(), domain: "org2.example", payload }));
        }
        await client.query("COMMIT");
      }
    } finally {
      client.release();
    }
    const arrived = () => new Set(collector.order.get("/cluster") ?? []);
    await waitFor(() => ids.every((id) => arrived().has(id)), 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${ids.filter((id) => !arrived().has(id)).length} of ${ids.length} missing`);
    });
    // Every entry carries its event id; each read was recorded in hand and removed once delivered.
    const [[, fields]] = (await redis.xrange(stream, "-", "+", "COUNT", 1)) as [string, string[]][];
    expect(fields).toContain("eid");
    await waitFor(async () => (await redis.hlen(keys.streamSide(stream, "inhand"))) === 0, 10_000);
  }, 90_000);

  it("moves the shared test clock for every process through the cluster's pub/sub", async () => {
    const a = await sharedTestClock(redis, rtKeys);
    const other = createRedis(cluster.url, "cluster-test-2");
    other.on("error", () => {});
    const b = await sharedTestClock(other, rtKeys);
    try {
      const before = b.now();
      await a.advance(3600);
      await waitFor(() => b.now() >= before + 3_600_000, 5_000, 20);
    } finally {
      await a.stop();
      await b.stop();
      other.disconnect();
      await deleteMatching(redis, `${prefix}*`);
    }
  });
});
