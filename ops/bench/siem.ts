#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startOutboxRelay } from "../../actors/outbox/index.js";
import { startSiemPusher } from "../../actors/siem/index.js";
import { destinationStreamName, SIEM_GROUP, insertEvent } from "../../shared/events/index.js";
import { streamStats } from "../../shared/platform/streams/stats.js";
import { startIngress } from "../../ingress/main.js";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext } from "../../shared/platform/context.js";
import { migrate } from "../../shared/platform/db/migrate.js";
import { ensureDatabase, resolveDatabaseUrl, transaction } from "../../shared/platform/db/pool.js";
import { deleteMatching } from "../../shared/platform/redis/client.js";
import { benchDatabaseUrl } from "./seed.js";

/**
 * `npm run bench:siem`: the events feed and the SIEM pusher, in one process on this
 * machine (ingress, outbox relay, pusher and two local collectors: an http receiver and
 * an Elasticsearch-like `_bulk` endpoint, each counting distinct ids). Writes a burst of
 * --events N (default 100 000) events in transactions of 1 000, samples the pushers' lag
 * (events written and not yet delivered, per destination) every 250 ms, and prints
 * events/s delivered to each collector, the largest lag and how long the tail took, then
 * feed lines/s paging through the burst (ndjson and syslog, limit 1000).
 * Uses REDIS_URL and DATABASE_URL like the gateway (database `<name>_bench`).
 */

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

interface Collector {
  url: string;
  ids: Set<number>;
  lastAt: number;
  close(): Promise<void>;
}

/** A receiver that stores distinct ids: JSON arrays (http) or `_bulk` create pairs. */
async function collector(kind: "http" | "bulk"): Promise<Collector> {
  const ids = new Set<number>();
  const c = { ids, lastAt: 0 } as Collector;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (kind === "http") {
        for (const event of JSON.parse(body) as { id: number }[]) ids.add(event.id);
        response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      } else {
        const lines = body.split("\n");
        const items: unknown[] = [];
        for (let i = 0; i + 1 < lines.length; i += 2) {
          const id = Number((JSON.parse(lines[i]) as { create: { _id: string } }).create._id);
          items.push({ create: { _id: String(id), status: ids.has(id) ? 409 : 201 } });
          ids.add(id);
        }
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ errors: false, items }));
      }
      c.lastAt = performance.now();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  c.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return c;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

async function main(): Promise<void> {
  const total = option("events", 100_000);
  const base = loadConfig(process.env);
  const databaseUrl = benchDatabaseUrl(resolveDatabaseUrl(base.databaseUrl, process.env.PGUSER));
  await ensureDatabase(databaseUrl);
  const adminToken = randomBytes(16).toString("hex");
  const prefix = `bench-siem:${randomBytes(4).toString("hex")}:`;
  const config = loadConfig({
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    REDIS_PREFIX: prefix,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "warn",
    ADMIN_TOKEN: adminToken,
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    GATEWAY_TEST_CLOCK: "",
  });
  const ctx = await openContext(config, "bench-siem");
  await migrate(ctx.db);
  const ingress = await startIngress(ctx);
  const url = `http://127.0.0.1:${ingress.port}`;
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${url}/admin/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, Record<string, unknown>>;
  };
  const [receiver, bulk] = await Promise.all([collector("http"), collector("bulk")]);
  const relay = await startOutboxRelay(ctx);
  const pusher = await startSiemPusher(ctx);
  let stopped = false;
  try {
    const orgId = (await admin("/orgs", { name: "SIEM bench", plan: "enterprise" })).org.id as number;
    const key = (await admin(`/orgs/${orgId}/keys`, { name: "Feed", kind: "server", rate_per_minute: 1_000_000 })).key as unknown as string;
    const httpId = (await admin(`/orgs/${orgId}/siem`, { kind: "http", url: receiver.url })).destination.id as number;
    const bulkId = (await admin(`/orgs/${orgId}/siem`, { kind: "elastic_bulk", url: bulk.url })).destination.id as number;
    await pusher.reload();

    const writeBurst = async (n: number, onBatch: (written: number) => void) => {
      for (let i = 0; i < n; i += 1000) {
        const size = Math.min(1000, n - i);
        await transaction(ctx.db, async (tx) => {
          for (let j = 0; j < size; j++) {
            await insertEvent(tx, {
              orgId,
              type: "scan.completed",
              timeMs: ctx.clock.now(),
              domain: "bench.example",
              payload: { kind: "web", grade: "A", score: 90, fail_count: (i + j) % 7 },
            });
          }
        });
        onBatch(i + size);
      }
    };
    const until = async (check: () => boolean) => {
      while (!check()) await new Promise((r) => setTimeout(r, 20));
    };

    // 1. Lag while a burst is written with the pusher running.
    let written = 0;
    let maxLag = { http: 0, bulk: 0 };
    const sampler = setInterval(() => {
      maxLag = { http: Math.max(maxLag.http, written - receiver.ids.size), bulk: Math.max(maxLag.bulk, written - bulk.ids.size) };
    }, 250);
    const started = performance.now();
    await writeBurst(total, (n) => (written = n));
    const burstMs = performance.now() - started;
    await until(() => receiver.ids.size >= total && bulk.ids.size >= total);
    clearInterval(sampler);
    const httpTail = receiver.lastAt - started - burstMs;
    const bulkTail = bulk.lastAt - started - burstMs;
    const statsOf = async (id: number) =>
      (await streamStats(ctx.redis, ctx.keys.stream(destinationStreamName(id)), ctx.keys)).groups.find((g) => g.group === SIEM_GROUP);
    // The collectors have everything; the acks follow the answers by a moment.
    let [hs, bs] = await Promise.all([statsOf(httpId), statsOf(bulkId)]);
    while ((hs?.pending ?? 0) + (bs?.pending ?? 0) + (hs?.lag ?? 0) + (bs?.lag ?? 0) > 0) {
      await new Promise((r) => setTimeout(r, 20));
      [hs, bs] = await Promise.all([statsOf(httpId), statsOf(bulkId)]);
    }
    process.stdout.write(
      `SIEM pusher during a burst of ${fmt(total)} events (written in ${(burstMs / 1000).toFixed(1)} s = ${fmt(total / (burstMs / 1000))} events/s through insertEvent):\n`,
    );
    process.stdout.write(
      `  largest lag (written, not yet at the collector), sampled every 250 ms: http ${fmt(maxLag.http)}, _bulk ${fmt(maxLag.bulk)} events\n`,
    );
    process.stdout.write(
      `  last event at the collector after the burst's last commit: http ${(httpTail / 1000).toFixed(2)} s, _bulk ${(bulkTail / 1000).toFixed(2)} s; every entry acked ${((performance.now() - started - burstMs) / 1000).toFixed(2)} s after it\n`,
    );

    // 2. Delivery throughput: a backlog of `total` events on the stream, then the pusher starts.
    await pusher.stop();
    stopped = true;
    await writeBurst(total, () => {});
    const backlog = ctx.keys.stream("events");
    await new Promise((r) => setTimeout(r, 500));
    process.stdout.write(`  backlog: ${fmt(await ctx.redis.xlen(backlog))} entries on the events stream\n`);
    const drainStart = performance.now();
    const second = await startSiemPusher(ctx);
    const httpStream = ctx.keys.stream(destinationStreamName(httpId));
    let fannedAt = 0;
    while (receiver.ids.size < 2 * total || bulk.ids.size < 2 * total) {
      if (fannedAt === 0 && (await ctx.redis.xlen(httpStream)) >= 2 * total) fannedAt = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    await second.stop();
    if (fannedAt > 0) process.stdout.write(`  fan-out of the backlog done after ${((fannedAt - drainStart) / 1000).toFixed(2)} s\n`);
    const httpRate = total / ((receiver.lastAt - drainStart) / 1000);
    const bulkRate = total / ((bulk.lastAt - drainStart) / 1000);
    process.stdout.write(`Delivery from a backlog of ${fmt(total)} events (fan-out + both destinations at once, batches of 500):\n`);
    process.stdout.write(`  http collector: ${fmt(httpRate)} events/s; _bulk collector: ${fmt(bulkRate)} events/s\n`);

    for (const format of ["ndjson", "syslog"]) {
      let since = "0";
      let lines = 0;
      const feedStarted = performance.now();
      for (;;) {
        const response = await fetch(`${url}/api/v1/events.php?key=${key}&since=${since}&limit=1000&format=${format}`);
        const text = await response.text();
        lines += text.split("\n").length - 1;
        since = response.headers.get("x-next-cursor") ?? since;
        if (response.headers.get("x-has-more") !== "1") break;
      }
      const feedMs = performance.now() - feedStarted;
      process.stdout.write(
        `  feed ${format.padEnd(6)}: ${fmt(lines)} lines in ${(feedMs / 1000).toFixed(2)} s = ${fmt(lines / (feedMs / 1000))} lines/s (limit 1000, one client)\n`,
      );
    }
  } finally {
    if (!stopped) await pusher.stop();
    await relay.stop();
    await ingress.stop();
    await Promise.all([receiver.close(), bulk.close()]);
    await deleteMatching(ctx.redis, `${prefix}*`);
    await ctx.db.query("TRUNCATE events, event_outbox, siem_destinations");
    await ctx.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
