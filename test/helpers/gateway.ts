import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext, type Context } from "../../shared/platform/context.js";
import { silentLogger } from "../../shared/platform/log.js";
import { startIngress, type RunningIngress } from "../../ingress/main.js";
import { createTestDatabase } from "./database.js";
import { answerChecker } from "./openapi.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789";
/** Random-looking, fixed: GATEWAY_SECRET refuses low-entropy values such as "11" repeated (shared/platform/config.ts). */
export const TEST_SECRET = "162c358e341d57ab663ae64512b8bd2a2bb2ffc62c820f34a63003582ebac81e";

export interface TestGateway {
  url: string;
  /** The internal metrics listener (METRICS_PORT): GET `${metricsUrl}/metrics`. */
  metricsUrl: string;
  ctx: Context;
  ingress: RunningIngress;
  prefix: string;
  databaseUrl: string;
  env: Record<string, string>;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  call(
    path: string,
    init?: {
      method?: string;
      body?: unknown;
      form?: Record<string, string>;
      headers?: Record<string, string>;
      query?: Record<string, string>;
    },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/**
 * An in-process gateway on a free port with its own database and Redis prefix, the test
 * clock on. `extraEnv` adds variables (e.g. DNS_RESOLVER for scans).
 */
export async function startTestGateway(label: string, extraEnv: Record<string, string> = {}): Promise<TestGateway> {
  const database = await createTestDatabase(label);
  const prefix = `t:${label}:${randomBytes(4).toString("hex")}:`;
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    REDIS_PREFIX: prefix,
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    GATEWAY_SECRET: TEST_SECRET,
    GATEWAY_TEST_CLOCK: "1",
    GATEWAY_ENV: "production",
    LOG_LEVEL: "silent",
    METRICS_PORT: "0",
    ...extraEnv,
  };
  const config = loadConfig(env);
  const ctx = await openContext(config, "test", { logger: silentLogger() });
  const ingress = await startIngress(ctx);
  const url = `http://127.0.0.1:${ingress.port}`;
  await ingress.deps.projector.rebuildAll();

  const checkAnswer = answerChecker(url);
  const call: TestGateway["call"] = async (path, init = {}) => {
    const query = init.query ? `?${new URLSearchParams(init.query)}` : "";
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers["content-type"] ??= "application/x-www-form-urlencoded";
    } else if (init.body !== undefined) {
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    const method = init.method ?? (body ? "POST" : "GET");
    const response = await fetch(`${url}${path}${query}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    // Every answer is checked against the OpenAPI documents (docs/api.md).
    const mismatch = checkAnswer(method.toUpperCase(), path, response.status, parsed, response.headers.get("content-type") ?? "");
    if (mismatch !== null) throw new Error(`answer outside the OpenAPI document: ${mismatch}`);
    return { status: response.status, body: parsed, headers: response.headers };
  };

  return {
    url,
    metricsUrl: `http://127.0.0.1:${ingress.metricsPort}`,
    ctx,
    ingress,
    prefix,
    databaseUrl: database.url,
    env,
    call,
    async admin(method, path, body) {
      const result = await call(`/admin/v1${path}`, {
        method,
        body: body ?? (method === "GET" ? undefined : {}),
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return { status: result.status, body: result.body };
    },
    async stop() {
      await ingress.stop();
      await cleanRedis(prefix);
      await ctx.close();
      await database.drop();
    },
  };
}

export async function cleanRedis(prefix: string): Promise<void> {
  const redis = new Redis("redis://127.0.0.1:6379");
  try {
    // Every key first, then one DEL: the keys vanish at one instant, as in a real Redis loss.
    // Deleting per SCAN page let an ingress rebuild its snapshots between two pages and lose
    // part of the rebuild to a later page (a key gone, its shard's sentinel kept).
    const all = new Set<string>();
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of found) all.add(key);
    } while (cursor !== "0");
    if (all.size) await redis.del(...all);
  } finally {
    redis.disconnect();
  }
}

/** Polls until `probe` returns a truthy value (bounded); for observable events, not sleeps. */
export async function waitFor<T>(probe: () => Promise<T> | T, timeoutMs = 10_000, intervalMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
