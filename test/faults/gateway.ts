import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "../../shared/platform/db/migrate.js";
import { createPool } from "../../shared/platform/db/pool.js";
import { ADMIN_TOKEN, TEST_SECRET, waitFor } from "../helpers/gateway.js";
import type { PrivatePostgres, PrivateRedis } from "./services.js";

/**
 * The gateway as an operator runs it, one OS process per role (`node dist/ops/start.js
 * ingress` / `actor <name>`), against the fault suite's private Redis and PostgreSQL, so a
 * test can SIGKILL a role or pull a service from under all of them.
 */

export interface Role {
  name: string;
  process: ChildProcess;
  output(): string;
}

export interface FaultGateway {
  url: string;
  databaseUrl: string;
  env: Record<string, string>;
  roles: Map<string, Role>;
  /** Starts a role's process; `as` names it in `roles` (two copies of one actor side by side). */
  start(role: string, as?: string): Promise<Role>;
  kill(role: string, signal?: NodeJS.Signals): Promise<void>;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export async function startFaultGateway(
  redis: Pick<PrivateRedis, "url">,
  postgres: PrivatePostgres,
  actors: string[],
  extraEnv: Record<string, string> = {},
): Promise<FaultGateway> {
  const name = `faults_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgres.url("postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const databaseUrl = postgres.url(name);
  const pool = createPool(databaseUrl, 2);
  await migrate(pool);
  await pool.end();

  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    PORT: String(await (await import("./services.js")).freePort()),
    METRICS_PORT: "0",
    HOST: "127.0.0.1",
    REDIS_URL: redis.url,
    REDIS_PREFIX: "gw:",
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    GATEWAY_SECRET: TEST_SECRET,
    GATEWAY_ENV: "production",
    LOG_LEVEL: "info",
    ...extraEnv,
  };
  const url = `http://127.0.0.1:${env.PORT}`;
  const roles = new Map<string, Role>();

  const self: FaultGateway = {
    url,
    databaseUrl,
    env,
    roles,
    async start(role, as = role) {
      const args = role === "ingress" ? ["ingress"] : ["actor", role];
      const child = spawn(process.execPath, ["dist/ops/start.js", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      const started: Role = { name: role, process: child, output: () => output };
      roles.set(as, started);
      if (role === "ingress") await waitFor(() => output.includes("listening on"), 20_000);
      else await waitFor(() => output.includes("actor running") || child.exitCode !== null, 20_000);
      if (child.exitCode !== null) throw new Error(`${role} exited at start: ${output}`);
      return started;
    },
    async kill(role, signal = "SIGKILL") {
      const found = roles.get(role);
      if (!found || found.process.exitCode !== null || found.process.signalCode !== null) return;
      const exited = new Promise((resolve) => found.process.once("exit", resolve));
      found.process.kill(signal);
      await exited;
    },
    async admin(method, path, body) {
      const response = await fetch(`${url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: body === undefined ? (method === "GET" ? undefined : "{}") : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* keep text */
      }
      return { status: response.status, body: parsed };
    },
    async stop() {
      await Promise.all([...roles.keys()].map((role) => self.kill(role)));
      const client = new pg.Client({ connectionString: postgres.url("postgres") });
      await client
        .connect()
        .then(() => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
        .catch(() => {});
      await client.end().catch(() => {});
    },
  };
  await self.start("ingress");
  for (const actor of actors) await self.start(actor);
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 20_000);
  return self;
}

/** An enterprise organization (no allowance limit) with a verified domain and a client key for it. */
export async function seedClientKey(gw: FaultGateway, domain = "faults.example"): Promise<{ orgId: number; keyId: number; key: string }> {
  const org = await gw.admin("POST", "/orgs", { name: "Faults", plan: "enterprise" });
  const orgId = org.body.org.id as number;
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain, verified: true });
  const made = await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "site", kind: "client", domain, rate_per_minute: 1_000_000 });
  if (made.status !== 201) throw new Error(`key not created: ${JSON.stringify(made.body)}`);
  return { orgId, keyId: made.body.details.id as number, key: made.body.key as string };
}

export interface Outcome {
  status: number;
  authorized: boolean | undefined;
  reason: string | undefined;
  ms: number;
}

/**
 * Calls verify from `workers` loops until `until()` says stop (bounded by `maxCalls`),
 * recording every outcome; network errors are recorded as status 0.
 */
export async function hammer(
  url: string,
  body: unknown,
  until: () => boolean,
  options: { workers?: number; maxCalls?: number } = {},
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const maxCalls = options.maxCalls ?? 200_000;
  let launched = 0;
  const worker = async () => {
    while (!until() && launched < maxCalls) {
      launched++;
      const started = Date.now();
      try {
        const response = await fetch(`${url}/api/v1/verify.php`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const parsed = (await response.json().catch(() => ({}))) as { authorized?: boolean; reason?: string };
        outcomes.push({ status: response.status, authorized: parsed.authorized, reason: parsed.reason, ms: Date.now() - started });
      } catch {
        outcomes.push({ status: 0, authorized: undefined, reason: "network", ms: Date.now() - started });
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers ?? 8 }, worker));
  return outcomes;
}

/** Calls counted in PostgreSQL for one key (the usage actor's totals). */
export async function countedInPostgres(databaseUrl: string, keyId: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string | null }>("SELECT sum(counted)::bigint AS n FROM usage_daily WHERE key_id = $1", [
      keyId,
    ]);
    return Number(rows[0].n ?? 0);
  } finally {
    await client.end();
  }
}
