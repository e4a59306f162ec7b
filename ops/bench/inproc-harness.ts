import { randomBytes } from "node:crypto";
import { buildApp } from "../../ingress/app.js";
import { startIngress } from "../../ingress/main.js";
import type { HttpReply, HttpRequest } from "../../ingress/types.js";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext } from "../../shared/platform/context.js";
import { resolveDatabaseUrl } from "../../shared/platform/db/pool.js";
import { benchDatabaseUrl, type BenchSeed, seedBench } from "./seed.js";

/**
 * What inproc.js (verify) and inproc-botcheck.js share: the options, a gateway started
 * in-process on the bench database (its own Redis prefix and secret), requests made as the
 * HTTP layer makes them, and the measure: `--inflight` calls at a time, CPU time (user +
 * system) of this process per call after a warm-up.
 */

export function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export interface InprocGateway {
  seeded: BenchSeed;
  dispatch(request: HttpRequest): Promise<HttpReply> | HttpReply;
  /** Makes POSTs to `path` with these headers, each as ingress/http.ts hands one to the routes. */
  poster(path: string, headers: Record<string, string>): (body: Buffer) => HttpRequest;
  /** Dispatches `make()` until the answer is no 503 (the first start rebuilds the snapshots from PostgreSQL). */
  firstAnswer(make: () => HttpRequest): Promise<HttpReply>;
  close(): Promise<void>;
}

export async function openInprocGateway(): Promise<InprocGateway> {
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
  let sequence = 0;
  const poster = (path: string, headers: Record<string, string>) => {
    const headerOrder = Object.keys(headers);
    return (body: Buffer): HttpRequest => ({
      method: "POST",
      path,
      query: "",
      headers,
      headerOrder,
      body,
      remoteAddress: "127.0.0.1",
      requestId: `r${++sequence}`,
      startedMs: performance.now(),
    });
  };
  const firstAnswer = async (make: () => HttpRequest): Promise<HttpReply> => {
    let reply = await dispatch(make());
    for (let tries = 0; reply.status === 503 && tries < 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await dispatch(make());
    }
    return reply;
  };
  return {
    seeded,
    dispatch,
    poster,
    firstAnswer,
    close: async () => {
      await ingress.stop();
      ctx.redis.disconnect();
      await ctx.db.end();
    },
  };
}

/**
 * `calls` dispatches of `make()`, `inflight` at a time, after `warmup` of them; prints
 * `<label> in-process: N calls, M in flight: X µs CPU per call (user …, system …); … calls/s wall`
 * (`npm run bench` reads verify's line).
 */
export async function measure(
  label: string,
  dispatch: InprocGateway["dispatch"],
  make: () => HttpRequest,
  options: { calls: number; inflight: number; warmup: number },
): Promise<void> {
  const run = async (n: number) => {
    let started = 0;
    const worker = async () => {
      while (started < n) {
        started++;
        await dispatch(make());
      }
    };
    await Promise.all(Array.from({ length: options.inflight }, worker));
  };
  await run(Math.min(options.calls, options.warmup));
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await run(options.calls);
  const used = process.cpuUsage(cpu);
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const { calls, inflight } = options;
  process.stdout.write(
    `${label} in-process: ${calls} calls, ${inflight} in flight: ${((used.user + used.system) / calls).toFixed(2)} µs CPU per call ` +
      `(user ${(used.user / calls).toFixed(2)}, system ${(used.system / calls).toFixed(2)}); ${Math.round(calls / wallS)} calls/s wall\n`,
  );
}
