import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../shared/platform/config.js";
import { insertEvent } from "../../shared/events/index.js";
import { createPool, resolveDatabaseUrl, transaction } from "../../shared/platform/db/pool.js";
import { createRedis, deleteMatching } from "../../shared/platform/redis/client.js";
import { BENCH_DOMAIN, benchDatabaseUrl, seedBench } from "../bench/seed.js";
import { parseWrk, type WrkRun } from "../bench/wrk.js";
import { startChild, type ServerChild } from "../bench/children.js";
import { botcheckTargets } from "../bench/botcheck.js";
import { cpuSeconds } from "../bench/load.js";
import { freePort } from "../../shared/platform/net/free-port.js";
import { SCANS_PER_HOUR } from "../../ingress/routes/scan.js";
import { CHANGES_PER_HOUR } from "../../ingress/routes/hourly-budget.js";
import { scanDomains, startScanTargets } from "./scan-targets.js";
import { changeBodies, firstScans, insertServerKey, seedScanOrgs } from "./seed-scans.js";

/**
 * `npm run load [-- --duration 60 | --soak 30m] [--usage N] [--sample S] [--scan-orgs N]`: the gateway as
 * deployed (ingress, the usage actor, the scanner actor and the outbox relay as their own
 * processes, against REDIS_URL and a `<name>_bench` database) under a mix of endpoints for
 * the given time, one wrk process per endpoint so each gets its own p50/p99; the mix is set
 * by connections (verify ~90% of them), and fresh scans and assignment changes are sent on a
 * schedule paced to their hourly budgets (runPaced). Scans reach only loopback servers the run starts (scan-targets.ts).
 * Every sample interval it prints stream lag per group, pending and dead letters (the
 * ingress's /metrics) and the RSS and CPU of every process; at the end throughput and latency
 * per endpoint and what the non-2xx answers were.
 */

/** Requests sent from this process on a fixed schedule instead of by wrk (runPaced). */
interface Paced {
  bodies: readonly string[];
  intervalMs: number;
}

interface Endpoint {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** A wrk script of its own (a `request` function that varies the request), instead of a fixed one. */
  lua?: string;
  connections: number;
  /** wrk's --timeout, seconds (5 unless set). */
  timeoutS?: number;
  /** Sent on a schedule by runPaced, not by wrk. */
  paced?: Paced;
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

/** "60", "60s", "30m", "1h" → seconds. */
export function seconds(text: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * (match[2] === "h" ? 3600 : match[2] === "m" ? 60 : 1);
}

const lua = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

function runWrk(url: string, endpoint: Endpoint, durationS: number, dir: string): Promise<WrkRun> {
  const lines = [`wrk.method = "${endpoint.method}"`];
  if (endpoint.body !== undefined) lines.push(`wrk.body = ${lua(endpoint.body)}`, 'wrk.headers["Content-Type"] = "application/json"');
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) lines.push(`wrk.headers[${lua(name)}] = ${lua(value)}`);
  const script = join(dir, `${endpoint.name.replace(/\W/g, "_")}.lua`);
  return writeFile(script, `${endpoint.lua ?? lines.join("\n")}\n`).then(
    () =>
      new Promise((resolve, reject) => {
        execFile(
          "wrk",
          [
            "-t1",
            `-c${endpoint.connections}`,
            `-d${durationS}s`,
            "--latency",
            "--timeout",
            `${endpoint.timeoutS ?? 5}s`,
            "-s",
            script,
            `${url}${endpoint.path}`,
          ],
          { maxBuffer: 1 << 20 },
          (error, stdout) => (error ? reject(error) : resolve(parseWrk(stdout))),
        );
      }),
  );
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** A gauge by its `group` label, summed over the other labels, in a Prometheus text page. */
function byGroup(page: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of page.split("\n")) {
    const group = line.startsWith(`${name}{`) ? /group="([^"]*)"/.exec(line)?.[1] : undefined;
    if (group !== undefined) out.set(group, (out.get(group) ?? 0) + Number(line.split(" ").pop()));
  }
  return out;
}

/** The value at quantile q of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * POSTs `paced.bodies` in turn, one every `paced.intervalMs` on a fixed schedule (or as soon
 * as the previous answer is in, if it came later), for `durationS`: how the scan and change
 * rates stay inside their hourly budgets. Driven from here, not by wrk: wrk's `delay()` did
 * not hold its pace against the ingress (a 30-minute soak sent about twice the scans it
 * asked for, and the budget answered 429), and at one request every few seconds the
 * generator cannot be the bottleneck.
 */
async function runPaced(url: string, endpoint: Endpoint, paced: Paced, durationS: number): Promise<WrkRun> {
  const { bodies, intervalMs } = paced;
  const started = performance.now();
  // As many as fit in the run: the budgets' arithmetic (runs × interval = duration) counts on it.
  const sends = Math.floor((durationS * 1000) / intervalMs);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  for (let i = 0; i < sends; i++) {
    const slot = started + i * intervalMs;
    const wait = slot - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    try {
      const response = await fetch(`${url}${endpoint.path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: bodies[i % bodies.length],
        signal: AbortSignal.timeout((endpoint.timeoutS ?? 5) * 1000),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - sent);
      if (response.status < 200 || response.status >= 300) non2xx++;
    } catch {
      errors++;
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / durationS,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    non2xx,
    errors,
  };
}

/** `gateway_http_requests_total` per label set (`endpoint="…",status="…",reason="…"`), in a Prometheus text page. */
function answersByLabels(page: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of page.split("\n")) {
    const match = /^gateway_http_requests_total\{(.*)\} (\S+)$/.exec(line);
    if (match) out.set(match[1], Number(match[2]));
  }
  return out;
}

/** Sum of a gauge over its label sets in a Prometheus text page. */
function gauge(page: string, name: string): number {
  let sum = 0;
  for (const line of page.split("\n")) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(" ").pop());
  return sum;
}

function startActorProcess(name: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../start.js", import.meta.url)), "actor", name], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("actor running")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`actor ${name} exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const soak = option("soak");
  const durationS = seconds(soak ?? option("duration") ?? "60");
  const sampleS = Number(option("sample") ?? (durationS >= 600 ? 60 : 10));
  const config = loadConfig(process.env);
  const databaseUrl = benchDatabaseUrl(resolveDatabaseUrl(config.databaseUrl, process.env.PGUSER));
  const prefix = `load:${randomBytes(4).toString("hex")}:`;
  const seeded = await seedBench(databaseUrl, Date.now());
  const pool = createPool(databaseUrl, 2);
  // A server key bound to loopback for the server-only reads (scan list, assignments, secret).
  const serverKey = await insertServerKey(pool, seeded.orgId, "Load server", BENCH_DOMAIN, Date.now());
  // Organizations to scan and assign in, one domain each (the budgets are per organization).
  const scanOrgs = await seedScanOrgs(pool, scanDomains(Number(option("scan-orgs") ?? 20)), Date.now());
  // 1 000 events to page through (events.php, 100 per page).
  const eventIds = await transaction(pool, async (tx) => {
    const ids: number[] = [];
    for (let i = 0; i < 1000; i++) {
      ids.push(
        await insertEvent(tx, {
          orgId: seeded.orgId,
          type: "scan.completed",
          timeMs: Date.now(),
          domain: BENCH_DOMAIN,
          payload: { kind: "web", grade: "B", score: 70, fail_count: 0 },
        }),
      );
    }
    return ids;
  });
  await pool.end();

  const dir = await mkdtemp(join(tmpdir(), "load-wrk-"));
  const targets = await startScanTargets(
    scanOrgs.map((o) => o.domain),
    Date.now(),
  );
  await writeFile(join(dir, "ca.pem"), targets.caPem);
  const env = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    REDIS_PREFIX: prefix,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "warn",
    GATEWAY_SECRET: randomBytes(32).toString("hex"),
    GATEWAY_TEST_CLOCK: "",
    ADMIN_TOKEN: randomBytes(16).toString("hex"),
    SITE_URL: "",
    // Scans reach the loopback targets through the scanner's test-only switch: not with GATEWAY_ENV=production.
    GATEWAY_ENV: "test",
    DNS_RESOLVER: targets.resolver,
    SCAN_ALLOW_PRIVATE: "1",
    SCAN_HTTP_PORT: String(targets.httpPort),
    SCAN_HTTPS_PORT: String(targets.httpsPort),
    SCAN_CA_FILE: join(dir, "ca.pem"),
  };
  // /metrics is on the ingress's internal listener (METRICS_PORT), not its public port.
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const ingress: ServerChild = await startChild(fileURLToPath(new URL("../start.js", import.meta.url)), ["ingress"], {
    ...env,
    METRICS_PORT: String(metricsPort),
  });
  // "actor running" is an info line: the actor logs at info to say it started.
  const usageProcesses = Number(option("usage") ?? 1);
  const roles = [
    ...Array.from({ length: usageProcesses }, (_, i) => (usageProcesses > 1 ? `usage-${i + 1}` : "usage")),
    "scanner",
    "outbox",
  ];
  const actors = await Promise.all(roles.map((role) => startActorProcess(role.replace(/-\d+$/, ""), { ...env, LOG_LEVEL: "info" })));
  const redis = createRedis(config.redisUrl, "load");
  try {
    const [newVisitor] = await botcheckTargets(ingress.url, seeded.botcheckKey, BENCH_DOMAIN);
    const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
    // One scan per domain first, so the changes have findings to name.
    const scanTargets = await firstScans(ingress.url, scanOrgs);
    // Paced to the budgets left in one clock hour: scans (one spent on the first scan) and changes, per
    // organization; rounded up, so duration / interval sends never exceed them.
    const windowMs = Math.min(durationS, 3600) * 1000;
    const scanDelayMs = Math.ceil(windowMs / (scanTargets.length * (SCANS_PER_HOUR - 1)));
    const changeDelayMs = Math.ceil(windowMs / (scanTargets.length * CHANGES_PER_HOUR));
    const endpoints: Endpoint[] = [
      {
        name: "verify",
        method: "POST",
        path: "/api/v1/verify.php",
        body: JSON.stringify({ key: seeded.key, domain: BENCH_DOMAIN }),
        connections: Number(option("verify-connections") ?? 54),
      },
      // A new desktop-Chrome visitor of the protected site, assessed and challenged (as `npm run bench` sends it).
      {
        name: "botcheck",
        method: "POST",
        path: "/api/v1/botcheck.php",
        body: newVisitor.body,
        headers: newVisitor.headers,
        connections: 1,
      },
      { name: "content", method: "GET", path: `/api/v1/content.php?${q({ key: seeded.key, domain: BENCH_DOMAIN })}`, connections: 1 },
      {
        name: "secret",
        method: "POST",
        path: "/api/v1/secret.php",
        body: JSON.stringify({ key: serverKey, name: "missing", domain: BENCH_DOMAIN }),
        connections: 1,
      },
      {
        name: "scan list",
        method: "GET",
        path: `/api/v1/scan.php?${q({ key: serverKey, domain: BENCH_DOMAIN, list: "1" })}`,
        connections: 1,
      },
      {
        name: "assignments",
        method: "GET",
        path: `/api/v1/assignments.php?${q({ key: serverKey, domain: BENCH_DOMAIN })}`,
        connections: 1,
      },
      { name: "status", method: "GET", path: "/api/status.php", connections: 1 },
      {
        name: "scan run",
        method: "POST",
        path: "/api/v1/scan.php",
        connections: 1,
        timeoutS: 30,
        paced: { bodies: scanTargets.map((t) => JSON.stringify({ key: t.key, domain: t.domain })), intervalMs: scanDelayMs },
      },
      {
        name: "assign change",
        method: "POST",
        path: "/api/v1/assignments.php",
        connections: 1,
        paced: { bodies: changeBodies(scanTargets, Date.now()), intervalMs: changeDelayMs },
      },
      {
        name: "events",
        method: "GET",
        path: "/api/v1/events.php",
        connections: 1,
        // Pages through the seeded events: since = first id - 1, then +100 each request, round and round.
        lua: [
          `local base = ${eventIds[0] - 1}`,
          "local page = 0",
          "request = function()",
          "  page = (page + 1) % 10",
          `  return wrk.format("GET", "/api/v1/events.php?${q({ key: serverKey, domain: BENCH_DOMAIN, limit: "100" })}&since=" .. (base + page * 100))`,
          "end",
        ].join("\n"),
      },
    ];
    const pids: Record<string, number> = { ingress: ingress.pid };
    actors.forEach((actor, i) => {
      pids[roles[i]] = actor.pid ?? 0;
    });
    process.stdout.write(
      `load: ${durationS} s against ${ingress.url}; one wrk per endpoint (${endpoints.map((e) => `${e.name} ${e.connections}c`).join(", ")})\n`,
    );
    process.stdout.write(
      `  ${scanTargets.length} scan organizations; a fresh scan every ${scanDelayMs} ms, a change every ${changeDelayMs} ms (sent on a schedule from this process)\n`,
    );
    const rss0: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) rss0[name] = await rssMb(pid);
    const started = Date.now();
    const cpu0: Record<string, number> = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
    let sampledAt = started;
    let maxLag = 0;
    const sampler = setInterval(
      () =>
        void (async () => {
          const page = await fetch(metricsUrl).then(
            (r) => r.text(),
            () => "",
          );
          const lags = byGroup(page, "gateway_group_lag");
          const lag = gauge(page, "gateway_group_lag");
          maxLag = Math.max(maxLag, lag);
          // CPU share of one core since the last sample, beside the RSS: what each role costs under this mix.
          const now = Date.now();
          const rss = await Promise.all(
            Object.entries(pids).map(async ([name, pid]) => {
              const cpu = cpuSeconds(pid);
              const share = ((cpu - (cpu0[name] ?? cpu)) / ((now - sampledAt) / 1000)) * 100;
              cpu0[name] = cpu;
              return `${name} ${await rssMb(pid)} MB ${share.toFixed(0)}%`;
            }),
          );
          sampledAt = now;
          process.stdout.write(
            `  t=${Math.round((Date.now() - started) / 1000)}s lag ${[...lags].map(([group, n]) => `${group} ${n}`).join(", ") || 0} pending ${gauge(page, "gateway_group_pending")} dead ${gauge(page, "gateway_stream_dead_letters")} | RSS, CPU ${rss.join(", ")}\n`,
          );
        })(),
      sampleS * 1000,
    );
    const runs = await Promise.all(
      endpoints.map((e) => (e.paced ? runPaced(ingress.url, e, e.paced, durationS) : runWrk(ingress.url, e, durationS, dir))),
    );
    clearInterval(sampler);
    const page = await fetch(metricsUrl).then(
      (r) => r.text(),
      () => "",
    );
    const total = runs.reduce((s, r) => s + r.requests, 0);
    process.stdout.write(
      `\n  ${"endpoint".padEnd(14)}${["requests", "req/s", "share", "p50 ms", "p99 ms", "non-2xx", "errors"].map((h) => h.padStart(10)).join("")}\n`,
    );
    endpoints.forEach((e, i) => {
      const r = runs[i];
      const cells = [
        String(r.requests),
        r.rps.toFixed(0),
        `${((r.requests / total) * 100).toFixed(1)}%`,
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        String(r.non2xx),
        String(r.errors),
      ];
      process.stdout.write(`  ${e.name.padEnd(14)}${cells.map((c) => c.padStart(10)).join("")}\n`);
    });
    process.stdout.write(
      `  total ${(total / durationS).toFixed(0)} req/s; max lag seen (all groups) ${maxLag}; dead letters ${gauge(page, "gateway_stream_dead_letters")}\n`,
    );
    // What the non-2xx answers were, as the ingress counted them (endpoint, status, reason).
    const refusals = [...answersByLabels(page)].filter(([labels]) => !/status="2/.test(labels));
    process.stdout.write(
      `  non-2xx answers by endpoint, status and reason: ${refusals.map(([labels, n]) => `${labels} ${n}`).join("; ") || "none"}\n`,
    );
    // The usage actor catches up: lag back to 0 after the load stops.
    const deadline = Date.now() + 60_000;
    let lagAfter = gauge(page, "gateway_group_lag");
    while (lagAfter > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      lagAfter = gauge(
        await fetch(metricsUrl).then(
          (r) => r.text(),
          () => "",
        ),
        "gateway_group_lag",
      );
    }
    process.stdout.write(`  lag ${Math.round((Date.now() - deadline + 60_000) / 1000)} s after the load: ${lagAfter}\n`);
    for (const [name, pid] of Object.entries(pids))
      process.stdout.write(`  RSS ${name}: ${rss0[name]} MB at start, ${await rssMb(pid)} MB at end\n`);
  } finally {
    for (const actor of actors) actor.kill("SIGTERM");
    await ingress.stop();
    await targets.stop();
    await rm(dir, { recursive: true, force: true });
    await deleteMatching(redis, `${prefix}*`);
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`load failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
