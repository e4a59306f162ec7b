#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { buildApp } from "../../ingress/app.js";
import { startIngress } from "../../ingress/main.js";
import type { HttpRequest } from "../../ingress/types.js";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext } from "../../shared/platform/context.js";
import { resolveDatabaseUrl } from "../../shared/platform/db/pool.js";
import { BENCH_DOMAIN, benchDatabaseUrl, seedBench } from "./seed.js";

/**
 * The route's own cost, without HTTP and without a load generator on the same cores:
 * verify.php dispatched in-process, `--inflight` calls at a time (default 64, like the
 * bench's connections), for `--calls` calls; prints the CPU time (user + system) of this
 * process per call, which counts the route, the counting batcher and ioredis. Run it
 * under `node --cpu-prof` for a profile of the route alone:
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/ops/bench/inproc.js [--calls N] [--inflight N]
 */

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

async function main(): Promise<void> {
  const calls = option("calls", 300_000);
  const inflight = option("inflight", 64);
  const base = loadConfig(process.env);
  const databaseUrl = benchDatabaseUrl(resolveDatabaseUrl(base.databaseUrl, process.env.PGUSER));
  const seeded = await seedBench(databaseUrl, Date.now());
  const config = loadConfig({
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    REDIS_PREFIX: `inproc:${randomBytes(4).toString("hex")}:`,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "warn",
    GATEWAY_SECRET: randomBytes(32).toString("hex"),
  });
  const ctx = await openContext(config, "ingress");
  const ingress = await startIngress(ctx);
  const dispatch = buildApp(ingress.deps);
  const body = Buffer.from(JSON.stringify({ key: seeded.key, domain: BENCH_DOMAIN, nonce: randomBytes(16).toString("hex") }));
  let sequence = 0;
  const request = (): HttpRequest => ({
    method: "POST",
    path: "/api/v1/verify.php",
    query: "",
    headers: { "content-type": "application/json", host: "127.0.0.1" },
    headerOrder: ["host", "content-type"],
    body,
    remoteAddress: "127.0.0.1",
    requestId: `r${++sequence}`,
    receivedAt: ctx.clock.now(),
    startedMs: performance.now(),
  });
  // The first start rebuilds the snapshots from PostgreSQL: wait for them.
  let probe = await dispatch(request());
  for (let tries = 0; probe.status === 503 && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    probe = await dispatch(request());
  }
  if (probe.status !== 200) throw new Error(`verify answered ${probe.status}: ${JSON.stringify(probe.body)}`);
  const run = async (n: number) => {
    let started = 0;
    const worker = async () => {
      while (started < n) {
        started++;
        await dispatch(request());
      }
    };
    await Promise.all(Array.from({ length: inflight }, worker));
  };
  await run(Math.min(calls, 50_000)); // warm-up
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await run(calls);
  const used = process.cpuUsage(cpu);
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(
    `verify in-process: ${calls} calls, ${inflight} in flight: ${((used.user + used.system) / calls).toFixed(2)} µs CPU per call ` +
      `(user ${(used.user / calls).toFixed(2)}, system ${(used.system / calls).toFixed(2)}); ${Math.round(calls / wallS)} calls/s wall\n`,
  );
  await ingress.stop();
  ctx.redis.disconnect();
  await ctx.db.end();
}

main().catch((error: unknown) => {
  process.stderr.write(`inproc failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
