#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { loadConfig } from "../../shared/platform/config.js";
import { backendPids, createPool, resolveDatabaseUrl } from "../../shared/platform/db/pool.js";
import { startActor, startChild, type ServerChild } from "./children.js";
import {
  chooseDriver,
  commandStats,
  counterValue,
  driveAll,
  scrape,
  statsDelta,
  type Companion,
  type LoadResult,
  type LoadSettings,
} from "./load.js";
import { botcheckTargets } from "./botcheck.js";
import { BENCH_DOMAIN, benchDatabaseUrl, seedBench } from "./seed.js";
import { freePort } from "../../shared/platform/net/free-port.js";
import { createKeys, SHARDS } from "../../shared/platform/redis/keys.js";
import { streamStats } from "../../shared/platform/streams/stats.js";

/**
 * `npm run bench`: verify.php against a bare uWS server and a bare node:http server
 * answering a constant JSON body of the same size, each a child process driven with the
 * same settings by wrk (Debian's `wrk`, one thread; autocannon with worker threads when wrk
 * is missing, said in the output) at 64 connections, POST JSON, after a 2 s warm-up, in
 * 3 interleaved rounds of 5 s so a busy neighbour on a shared machine weighs on all three
 * alike; every figure is the median of the rounds. Prints req/s, p50, p99,
 * the ratios, and the Redis round trips per verify (the gateway's own script-run
 * counter, cross-checked with INFO commandstats). Then botcheck.php assess throughput for
 * a key with bot protection on and a desktop Chrome's headers and signals (botcheck.ts),
 * a new visitor (challenged) and a returning one (token), with the same settings.
 * Options: --round S (seconds per run), --rounds N, --warmup S, --connections N, --profile DIR
 * (CPU profiles of the gateway, and of the usage actor in DIR/usage, written when they stop), --only verify (skip botcheck),
 * --ingress N (N gateway processes on one port, as INGRESS_PROCESSES=N runs them).
 * The usage actor runs beside the gateway, as in production. Besides each server's own CPU
 * time per request, the gateway's rows say what each request cost the processes working
 * for it on the same cores: Redis (the whole server: other clients of a shared Redis add
 * to it), the usage actor, and the PostgreSQL backends connected to the bench database.
 * Before the HTTP runs, inproc.js measures verify's own CPU per call in a child (no HTTP,
 * no load generator on the cores; --inproc-calls N, 0 to skip); its figure closes the summary.
 * Uses REDIS_URL and DATABASE_URL (a `<name>_bench` database) like the gateway does.
 */

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function textOption(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function waitHealthy(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error("the gateway did not become healthy");
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (found.length) await redis.del(...found);
  } while (cursor !== "0");
}

/** inproc.js in a child: verify's CPU µs per call in-process, or null when it failed (its error is printed). */
async function inProcess(calls: number): Promise<{ line: string; us: number } | null> {
  const script = fileURLToPath(new URL("./inproc.js", import.meta.url));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, "--calls", String(calls)], {
      env: process.env,
      maxBuffer: 1 << 20,
    });
    const line = stdout.split("\n").find((l) => l.startsWith("verify in-process")) ?? "";
    const us = Number(/: ([\d.]+) µs CPU per call/.exec(line)?.[1] ?? NaN);
    return Number.isFinite(us) ? { line, us } : null;
  } catch (error) {
    process.stderr.write(`inproc failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return null;
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

function printTable(rows: LoadResult[]): void {
  const line = (cells: string[]) =>
    `  ${cells[0].padEnd(16)}${cells
      .slice(1)
      .map((c) => c.padStart(12))
      .join("")}`;
  process.stdout.write(`${line(["server", "req/s", "p50 ms", "p99 ms", "non-2xx", "errors", "CPU µs/req"])}\n`);
  for (const r of rows) {
    process.stdout.write(
      `${line([r.name, fmt(r.rps), fmt(r.p50, 2), fmt(r.p99, 2), String(r.non2xx), String(r.errors), fmt(r.cpuUs, 1)])}\n`,
    );
  }
  const withCompanions = rows.filter((r) => Object.keys(r.companionsUs).length > 0);
  if (withCompanions.length === 0) return;
  const names = Object.keys(withCompanions[0].companionsUs);
  process.stdout.write(`\n  CPU µs per request, every process on the cores (medians of the rounds)\n`);
  process.stdout.write(`${line(["server", "itself", ...names, "total"])}\n`);
  for (const r of withCompanions) {
    const others = names.map((n) => r.companionsUs[n] ?? NaN);
    process.stdout.write(
      `${line([
        r.name,
        fmt(r.cpuUs, 1),
        ...others.map((v) => fmt(v, 1)),
        fmt(
          others.reduce((a, b) => a + b, r.cpuUs),
          1,
        ),
      ])}\n`,
    );
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const settings: LoadSettings = {
    connections: option("connections", 64),
    roundS: option("round", 5),
    warmupS: option("warmup", 2),
    rounds: option("rounds", 3),
  };
  const databaseUrl = benchDatabaseUrl(resolveDatabaseUrl(config.databaseUrl, process.env.PGUSER));
  const prefix = `bench:${randomBytes(4).toString("hex")}:`;
  const redis = new Redis(config.redisUrl);
  const children: ServerChild[] = [];
  const driver = await chooseDriver();
  const benchPool = createPool(databaseUrl, 1);
  const inprocCalls = process.argv.includes("--inproc-calls") ? Number(textOption("inproc-calls")) : 200_000;
  // First, alone on the cores: it seeds the bench database itself, which the runs below seed again.
  const inproc = inprocCalls > 0 ? await inProcess(inprocCalls) : null;
  if (inproc) process.stdout.write(`${inproc.line}\n`);
  try {
    const seeded = await seedBench(databaseUrl, Date.now());
    const env = {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      REDIS_PREFIX: prefix,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      GATEWAY_SECRET: randomBytes(32).toString("hex"),
      GATEWAY_TEST_CLOCK: "",
      ADMIN_TOKEN: "",
      SITE_URL: "",
    };
    const start = fileURLToPath(new URL("../start.js", import.meta.url));
    // --profile DIR: the gateway writes a V8 CPU profile there when it stops (node --cpu-prof).
    const profileDir = textOption("profile");
    const processes = option("ingress", 1);
    // Several processes share one port (SO_REUSEPORT), as the supervisor runs them.
    const gatewayEnv = processes > 1 ? { ...env, PORT: String(await freePort()) } : env;
    const gateways: ServerChild[] = [];
    // Each process its own metrics port: its /metrics counts its own requests.
    const metricsUrls: string[] = [];
    for (let i = 0; i < processes; i++) {
      const metricsPort = await freePort();
      metricsUrls.push(`http://127.0.0.1:${metricsPort}`);
      const flags = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
      gateways.push(await startChild(start, ["ingress"], { ...gatewayEnv, METRICS_PORT: String(metricsPort) }, 20_000, flags));
    }
    children.push(...gateways);
    const gateway = gateways[0];
    const gatewayPids = gateways.map((g) => g.pid);
    // The usage actor applies what verify counts, on the same cores, as in production.
    const usage = startActor(start, "usage", env, profileDir ? ["--cpu-prof", "--cpu-prof-dir", `${profileDir}/usage`] : []);
    children.push(usage);
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? NaN);
    const companions: Companion[] = [
      { name: "redis", pids: async () => (Number.isFinite(redisPid) ? [redisPid] : []) },
      { name: "usage actor", pids: async () => [usage.pid] },
      { name: "postgres", pids: () => backendPids(benchPool) },
    ];
    await waitHealthy(gateway.url);
    const verifyUrl = `${gateway.url}/api/v1/verify.php`;
    const request = JSON.stringify({ key: seeded.key, domain: BENCH_DOMAIN, nonce: randomBytes(16).toString("hex") });
    const probe = await fetch(verifyUrl, { method: "POST", headers: { "content-type": "application/json" }, body: request });
    const answer = await probe.text();
    if (probe.status !== 200) throw new Error(`verify answered ${probe.status}: ${answer}`);
    const bodyLength = Buffer.byteLength(answer);

    const script = fileURLToPath(new URL("./bare.js", import.meta.url));
    const uws = await startChild(script, ["uws", String(bodyLength)], process.env);
    children.push(uws);
    const http = await startChild(script, ["http", String(bodyLength)], process.env);
    children.push(http);

    process.stdout.write(
      `load generator: ${driver.name}; verify answer ${bodyLength} bytes; ${settings.connections} connections; ` +
        `${settings.rounds} interleaved rounds of ${settings.roundS} s per server after ${settings.warmupS} s warm-up; medians of the rounds; ` +
        `${processes} gateway process${processes > 1 ? "es" : ""}\n`,
    );
    const metricsBefore = await Promise.all(metricsUrls.map(scrape));
    const statsBefore = await commandStats(redis);
    const [bareHttp, bareUws, verify] = await driveAll(
      driver,
      [
        { name: "node:http", url: http.url, pids: [http.pid] },
        { name: "uWS", url: uws.url, pids: [uws.pid] },
        { name: "verify.php", url: verifyUrl, pids: gatewayPids, companions },
      ],
      request,
      settings,
    );
    const statsAfter = await commandStats(redis);
    const metricsAfter = await Promise.all(metricsUrls.map(scrape));

    printTable([bareHttp, bareUws, verify]);
    // The fastest server bounds what this generator can show: a ratio against a baseline
    // near this figure measures the generator, not the server.
    const ceiling = await driver.once({ name: "ceiling", url: uws.url }, request, settings.connections, settings.roundS);
    process.stdout.write(`  load generator ceiling (bare uWS, same settings, one more run): ${fmt(ceiling.rps)} req/s\n`);
    // Warm-up calls are included on both sides of the ratio below (runs and calls).
    const grew = (name: string) =>
      metricsAfter.reduce((sum, text, i) => sum + counterValue(text, name) - counterValue(metricsBefore[i], name), 0);
    const runs = grew("gateway_verify_script_runs_total");
    const judged = grew("gateway_verify_counted_calls_total");
    const delta = statsDelta(statsBefore, statsAfter);
    const evalsha = (delta.get("evalsha") ?? 0) + (delta.get("eval") ?? 0);
    process.stdout.write(`\n  verify / node:http  ${fmt(verify.rps / bareHttp.rps, 2)}x   (target >= 0.9, goal >= 1.0)\n`);
    process.stdout.write(`  verify / uWS        ${fmt(verify.rps / bareUws.rps, 2)}x   (goal >= 0.5)\n`);
    process.stdout.write(`  verify p99          ${fmt(verify.p99, 2)} ms (target <= 2.5)\n`);
    process.stdout.write(`  verify in-process   ${inproc ? `${fmt(inproc.us, 2)} µs CPU per call` : "not measured"} (target <= 4)\n`);
    process.stdout.write(
      `  Redis round trips per verify: ${fmt(runs / Math.max(judged, 1), 3)} (${fmt(runs)} script runs for ${fmt(judged)} calls, ${fmt(judged / Math.max(runs, 1), 1)} calls per run)\n`,
    );
    process.stdout.write(
      `  INFO commandstats over the runs: ${fmt(evalsha)} EVALSHA = ${fmt(evalsha / Math.max(judged, 1), 3)} per verify; ${fmt([...delta.values()].reduce((a, b) => a + b, 0))} commands in all (server-wide, script internals included)\n`,
    );

    // Does one usage process keep up? Entries not yet read (lag) or read and not yet applied (pending), right after the runs.
    const usageKeys = createKeys(prefix);
    let lag = 0;
    let pending = 0;
    for (let shard = 0; shard < SHARDS; shard++) {
      const stats = await streamStats(redis, usageKeys.usageStream(shard));
      for (const group of stats.groups) {
        lag += group.lag;
        pending += group.pending;
      }
    }
    process.stdout.write(
      `  usage actor right after the runs: ${fmt(lag)} entries not yet read, ${fmt(pending)} in hand (${fmt(runs)} written during the runs)\n`,
    );

    if (textOption("only") === "verify") return;
    const botcheck = await botcheckTargets(gateway.url, seeded.botcheckKey, BENCH_DOMAIN);
    process.stdout.write(`\nbotcheck.php assess, key with bot protection on, desktop Chrome headers and signals; same settings\n`);
    const assessed = await driveAll(
      driver,
      botcheck.map((t) => ({ ...t, pids: gatewayPids, companions })),
      request,
      settings,
    );
    printTable(assessed);
    for (const r of assessed) process.stdout.write(`  ${r.name} / verify  ${fmt(r.rps / verify.rps, 2)}x   (target >= 0.5, p99 <= 8 ms)\n`);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await benchPool.end();
    await deletePrefix(redis, prefix).catch(() => {});
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
