/**
 * The monitor's schedule cannot be steered by the names an organization picks: offsets are
 * keyed with a server secret, and one organization gets at most MONITOR_PER_ORG jobs a run.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstRunOf, MONITOR_PER_ORG, monitorScheduleKey, offsetOf, runMonitor } from "../../../actors/monitor/handler.js";
import { insertOrg } from "../../../shared/accounts/db/orgs.js";
import { createRedis, type Redis } from "../../../shared/platform/redis/client.js";
import { createKeys } from "../../../shared/platform/redis/keys.js";
import { scheduleDomain, SCAN_STREAM, type ScanJob } from "../../../shared/scans/index.js";
import { createTestDatabase } from "../../helpers/database.js";
import { cleanRedis } from "../../helpers/gateway.js";

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const NOW = Date.UTC(2030, 0, 1, 12);
const KEY = monitorScheduleKey(Buffer.from("a master secret of the test, 32+ bytes long"));

/** The offset an unkeyed hash gave, which anyone can compute for any name. */
const unkeyedMinute = (orgId: number, domain: string) =>
  Number(createHash("sha256").update(`${orgId}:${domain}`).digest().readBigUInt64BE(0) % BigInt(DAY_MS)) / MINUTE_MS;

describe("keyed offsets", () => {
  it("names ground to share one minute under the public hash spread over the day under the keyed one", () => {
    const target = Math.floor(unkeyedMinute(1, "n0.victim.test"));
    const ground: string[] = [];
    for (let i = 0; ground.length < 30; i++) {
      const name = `n${i}.victim.test`;
      if (Math.floor(unkeyedMinute(1, name)) === target) ground.push(name);
    }
    const minutes = new Set(ground.map((name) => Math.floor(offsetOf(KEY, 1, name, DAY_MS) / MINUTE_MS)));
    expect(minutes.size).toBeGreaterThan(25);
  });

  it("depends on the key: another deployment's secret gives other offsets", () => {
    const other = monitorScheduleKey(randomBytes(32));
    const names = Array.from({ length: 20 }, (_, i) => `d${i}.test`);
    const same = names.filter((name) => offsetOf(KEY, 1, name, DAY_MS) === offsetOf(other, 1, name, DAY_MS));
    expect(same).toEqual([]);
  });
});

describe("one monitor run", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: Redis;
  const keys = createKeys(`t:monitor-schedule:${randomBytes(4).toString("hex")}:`);
  let busy: number;
  let quiet: number;

  const addDomains = async (orgId: number, names: string[]) => {
    for (const name of names) {
      await db.pool.query(
        "INSERT INTO domains (org_id, name, verified, verification_token, created_at) VALUES ($1, $2, true, 'x', now())",
        [orgId, name],
      );
      // Due an hour ago, all at one instant: as if ground to one minute, or after the monitor was down.
      await scheduleDomain(db.pool, orgId, name, NOW - 3_600_000);
    }
  };
  const published = async (): Promise<ScanJob[]> =>
    (await redis.xrange(keys.stream(SCAN_STREAM), "-", "+")).map(([, fields]) => JSON.parse(fields[fields.indexOf("data") + 1]));
  const run = (nowMs: number) => runMonitor({ db: db.pool, redis, keys, nowMs, periodMs: DAY_MS, scheduleKey: KEY });

  beforeAll(async () => {
    db = await createTestDatabase("monitorschedule");
    redis = createRedis("redis://127.0.0.1:6379", "monitor-schedule-test");
    const org = async (name: string) =>
      Number((await insertOrg(db.pool, { name, plan: "professional", fixTargetDays: 30, subscription: "active", nowMs: NOW })).id);
    busy = await org("busy");
    quiet = await org("quiet");
    await addDomains(
      busy,
      Array.from({ length: 2 * MONITOR_PER_ORG + 5 }, (_, i) => `s${i}.busy.test`),
    );
    await addDomains(quiet, ["a.quiet.test", "b.quiet.test"]);
  });
  afterAll(async () => {
    redis?.disconnect();
    await cleanRedis(keys.prefix);
    await db?.drop();
  });

  it("publishes at most MONITOR_PER_ORG jobs of one organization; the rest stay due for the next run", async () => {
    expect(await run(NOW)).toBe(MONITOR_PER_ORG + 2);
    const first = await published();
    expect(first.filter((j) => j.org_id === busy)).toHaveLength(MONITOR_PER_ORG);
    expect(first.filter((j) => j.org_id === quiet).map((j) => j.domain)).toEqual(["a.quiet.test", "b.quiet.test"]);

    expect(await run(NOW + MINUTE_MS)).toBe(MONITOR_PER_ORG);
    expect(await run(NOW + 2 * MINUTE_MS)).toBe(5);
    expect(await run(NOW + 3 * MINUTE_MS)).toBe(0);
    const all = await published();
    expect(new Set(all.filter((j) => j.org_id === busy).map((j) => j.domain)).size).toBe(2 * MONITOR_PER_ORG + 5);
  });

  it("a claimed domain moves to its keyed offset, whatever offset its row had", async () => {
    const { rows } = await db.pool.query<{ org_id: string; domain: string; next_ms: string; last_ms: string }>(
      `SELECT org_id, domain, (extract(epoch FROM next_run_at) * 1000)::bigint AS next_ms,
              (extract(epoch FROM last_run_at) * 1000)::bigint AS last_ms FROM monitor_schedule`,
    );
    expect(rows).toHaveLength(2 * MONITOR_PER_ORG + 7);
    for (const row of rows) {
      const next = Number(row.next_ms);
      expect(next, row.domain).toBe(firstRunOf(KEY, Number(row.org_id), row.domain, Number(row.last_ms), DAY_MS));
      expect(next % DAY_MS, row.domain).toBe(offsetOf(KEY, Number(row.org_id), row.domain, DAY_MS));
    }
  });
});
