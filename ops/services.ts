import { ping } from "../shared/platform/db/pool.js";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { Redis } from "ioredis";
import pg from "pg";
import type { Config } from "../shared/platform/config.js";
import { resolveDatabaseUrl } from "../shared/platform/db/pool.js";
import { parseClusterUrl } from "../shared/platform/redis/client.js";

/**
 * `npm start` on a fresh machine: make sure Redis and PostgreSQL answer, starting local
 * installed-but-stopped servers, or stop with a message naming what to install.
 */

const isLocal = (host: string) => ["127.0.0.1", "localhost", "::1", ""].includes(host);

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1500 });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

async function postgresAnswers(url: string): Promise<boolean> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 1500 });
  client.on("error", () => {});
  try {
    await client.connect();
    await ping(client);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const hasCommand = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;

async function waitUntil(probe: () => Promise<boolean>, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i++) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

export async function ensureServices(config: Config, log: (line: string) => void, pgUser?: string): Promise<void> {
  const dbUrl = resolveDatabaseUrl(config.databaseUrl, pgUser);
  // A Redis Cluster is the operator's to run: never started here (each process fails fast until it answers).
  if (parseClusterUrl(config.redisUrl) === null && !(await redisAnswers(config.redisUrl))) {
    const url = new URL(config.redisUrl);
    if (!isLocal(url.hostname) || !hasCommand("redis-server")) {
      throw new Error(`Redis does not answer at ${url.host}. Install Redis 6.2+ (Debian: apt install redis-server) or set REDIS_URL.`);
    }
    log(`starting a local redis-server on port ${url.port || 6379}`);
    for (const dir of ["/var/lib/redis", "/var/log/redis"]) if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    execFileSync("redis-server", [
      "--daemonize",
      "yes",
      "--bind",
      "127.0.0.1",
      "-::1",
      "--port",
      url.port || "6379",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      "/var/lib/redis",
      "--logfile",
      "/var/log/redis/gateway.log",
    ]);
    if (!(await waitUntil(() => redisAnswers(config.redisUrl), 10))) throw new Error("redis-server was started but does not answer");
  }
  if (!(await postgresAnswers(dbUrl))) {
    const url = new URL(dbUrl);
    if (!isLocal(url.hostname) || !hasCommand("pg_ctlcluster") || !existsSync("/etc/postgresql")) {
      throw new Error(
        `PostgreSQL does not answer at ${url.host}. Install PostgreSQL 14+ (Debian: apt install postgresql) or set DATABASE_URL.`,
      );
    }
    const version = readdirSync("/etc/postgresql")[0];
    log(`starting the local PostgreSQL ${version} cluster`);
    execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"]);
    if (!(await waitUntil(() => postgresAnswers(dbUrl), 20))) throw new Error("PostgreSQL was started but does not answer");
  }
}
