#!/usr/bin/env node
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { hostname } from "node:os";
import { ACTORS } from "../actors/index.js";
import { startIngress } from "../ingress/main.js";
import { ConfigError, loadConfig, requireProductionSecret, type Config } from "../shared/platform/config.js";
import { openContext } from "../shared/platform/context.js";
import { migrate } from "../shared/platform/db/migrate.js";
import { createPool, ensureDatabase, resolveDatabaseUrl } from "../shared/platform/db/pool.js";
import { DEMO_ADMIN_TOKEN, storeSettingOnce } from "../shared/platform/db/settings.js";
import { systemClock } from "../shared/platform/clock.js";
import { createLogger } from "../shared/platform/log.js";
import { createKeys } from "../shared/platform/redis/keys.js";
import { createRedis } from "../shared/platform/redis/client.js";
import { createProjector } from "../shared/verify/index.js";
import { startHeartbeat } from "../shared/platform/streams/alive.js";
import { INGRESS_NODE_FLAGS } from "./node-flags.js";
import { lowerActorPriority } from "./priority.js";
import { ensureServices } from "./services.js";
import { seedDemo } from "./seed.js";
import { DEMO_PAGE_HOST } from "../ingress/routes/demo.js";
import { demoOwnerLink, prepareDemoPage } from "./demo.js";
import { freePort } from "../shared/platform/net/free-port.js";

/**
 * One entry point for every role:
 *   node dist/ops/start.js                 supervisor: services, database, migrations, seed, then
 *                                          the ingress and every actor as restarted children
 *   node dist/ops/start.js ingress         the HTTP ingress alone
 *   node dist/ops/start.js actor <name>    one actor alone
 */

const SHUTDOWN_MS = 10_000;
const env = process.env;
const pgUser = env.PGUSER;

function loadOrExit(): Config {
  try {
    const config = loadConfig(env);
    requireProductionSecret(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

function onSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), SHUTDOWN_MS);
    force.unref();
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  stopOnDisconnect = handler;
}

/** How a child stops once the supervisor is gone: exit, until its role is running (onSignals). */
let stopOnDisconnect: () => void = () => process.exit(1);

/**
 * A child of the supervisor (forked, with an IPC channel) stops when the supervisor is gone,
 * even killed with SIGKILL, and even while it is still starting: no orphan keeps the port or
 * the streams.
 */
function watchSupervisor(): void {
  if (process.send !== undefined) process.once("disconnect", () => stopOnDisconnect());
}

async function runIngress(config: Config): Promise<void> {
  const ctx = await openContext(config, "ingress", { pgUser });
  const ingress = await startIngress(ctx);
  process.stdout.write(`listening on http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${ingress.port}\n`);
  ctx.logger.debug({ host: config.metricsHost, port: ingress.metricsPort }, "metrics listener (GET /metrics)");
  onSignals(async () => {
    await ingress.stop();
    await ctx.close();
  });
}

async function runActor(config: Config, name: string): Promise<void> {
  const load = ACTORS[name];
  if (!load) {
    process.stderr.write(`unknown actor ${JSON.stringify(name)}; known: ${Object.keys(ACTORS).join(", ") || "none"}\n`);
    process.exit(2);
  }
  const niceFault = lowerActorPriority(name, config.actorNice);
  const ctx = await openContext(config, `actor:${name}`, { pgUser });
  if (niceFault !== null) {
    ctx.logger.warn(
      { err: niceFault, actor: name, nice: config.actorNice },
      "cannot lower the actor's CPU priority; it runs at the ingress's",
    );
  }
  const actor = await (await load())(ctx);
  const heartbeat = startHeartbeat(ctx.redis, ctx.keys, name, `${hostname()}-${process.pid}`);
  ctx.logger.info({ actor: name }, "actor running");
  onSignals(async () => {
    await heartbeat.stop();
    await actor.stop();
    await ctx.close();
  });
}

interface Child {
  role: string[];
  process: ChildProcess | null;
  restarts: number;
  startedAt: number;
}

async function supervise(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, "supervisor");
  const say = (line: string) => process.stdout.write(`${line}\n`);
  await ensureServices(config, say, pgUser);
  const dbUrl = resolveDatabaseUrl(config.databaseUrl, pgUser);
  if (await ensureDatabase(dbUrl)) say(`created database ${new URL(dbUrl).pathname.slice(1)}`);
  const pool = createPool(dbUrl, 2);
  const applied = await migrate(pool);
  if (applied.length) say(`applied migrations: ${applied.join(", ")}`);

  const childEnv: NodeJS.ProcessEnv = { ...env };
  if (!config.adminToken) {
    const token = await storeSettingOnce(pool, DEMO_ADMIN_TOKEN, Buffer.from(randomBytes(24).toString("base64url")), Date.now());
    childEnv.ADMIN_TOKEN = token.toString("utf8");
    say(`demo mode: ADMIN_TOKEN=${childEnv.ADMIN_TOKEN} (kept across restarts; \`npx gateway admin-token\` prints it)`);
  }
  const seeded = await seedDemo(pool, Date.now(), config.environment === "production");
  if (seeded) {
    say("seeded a demo organization (these keys are shown once):");
    say(`  organization id: ${seeded.orgId}   verified domain: ${seeded.domain}`);
    say(`  client key: ${seeded.clientKey}`);
    say(`  server key: ${seeded.serverKey}`);
  }
  // Demo mode: fresh keys for the demo page (docs/embed.md), handed to the children only.
  const demo = config.adminToken ? null : await prepareDemoPage(pool, Date.now(), config.environment === "production");
  const ownerLink = demo ? await demoOwnerLink(pool, Date.now()) : null;
  if (demo) {
    childEnv.DEMO_CLIENT_KEY = demo.client;
    childEnv.DEMO_SERVER_KEY = demo.server;
  }
  if (seeded || demo) {
    // The children rebuild snapshots on start too; projecting now lets the first call succeed at once.
    const redis = createRedis(config.redisUrl, "supervisor");
    const ctxLike = { db: pool, redis, keys: createKeys(config.redisPrefix), clock: systemClock(), logger };
    await createProjector(ctxLike).rebuildAll();
    redis.disconnect();
  }
  await pool.end();

  const entry = fileURLToPath(import.meta.url);
  // Several ingress processes share one port (SO_REUSEPORT): with PORT=0 choose it here.
  if (config.port === 0 && config.ingressProcesses > 1) childEnv.PORT = String(await freePort(config.host));
  if (demo && (childEnv.PORT ?? String(config.port)) !== "0")
    say(`demo page: http://${DEMO_PAGE_HOST}:${childEnv.PORT ?? config.port}/demo`);
  // docs/dashboard.md: the operator signs in by pasting the admin token (members: passkeys or e-mailed links at /dashboard/signin).
  if (!config.siteUrl.endsWith(":0") || childEnv.PORT) {
    const site = config.siteUrl.endsWith(":0") ? config.siteUrl.replace(/:0$/, `:${childEnv.PORT}`) : config.siteUrl;
    say(`dashboard: ${site}/dashboard (sign in with the ${config.adminToken ? "ADMIN_TOKEN" : "ADMIN_TOKEN above"})`);
    // A passkey needs a host name, not an address: SITE_URL=http://localhost:PORT for the demo owner's link.
    if (ownerLink)
      say(
        `demo owner (owner@demo.example) signs in at: ${site}${ownerLink.path} (single use, until ${new Date(ownerLink.expiresAtMs).toISOString()})`,
      );
  }
  const children: Child[] = [
    ...Array.from({ length: config.ingressProcesses }, (): Child => ({ role: ["ingress"], process: null, restarts: 0, startedAt: 0 })),
    ...Object.keys(ACTORS).map((name) => ({ role: ["actor", name], process: null, restarts: 0, startedAt: 0 })),
  ];
  let stopping = false;

  const launch = (child: Child) => {
    child.startedAt = Date.now();
    const execArgv = child.role[0] === "ingress" ? [...process.execArgv, ...INGRESS_NODE_FLAGS] : process.execArgv;
    const proc = fork(entry, child.role, { env: childEnv, stdio: "inherit", execArgv });
    child.process = proc;
    logger.info({ role: child.role.join(" "), pid: proc.pid }, "child started");
    proc.on("exit", (code, signal) => {
      child.process = null;
      if (stopping) return;
      // Back off on crash loops; a child that ran a minute starts its count afresh.
      if (Date.now() - child.startedAt > 60_000) child.restarts = 0;
      const delay = Math.min(500 * 2 ** child.restarts, 30_000);
      child.restarts++;
      logger.warn({ role: child.role.join(" "), code, signal, delay }, "child exited; restarting");
      setTimeout(() => {
        if (!stopping) launch(child);
      }, delay).unref();
    });
  };
  for (const child of children) launch(child);

  onSignals(async () => {
    stopping = true;
    const exits = children
      .filter((c) => c.process)
      .map(
        (c) =>
          new Promise<void>((resolve) => {
            const proc = c.process as ChildProcess;
            proc.once("exit", () => resolve());
            proc.kill("SIGTERM");
          }),
      );
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_MS - 500).unref());
    await Promise.race([Promise.all(exits), deadline]);
    for (const c of children) c.process?.kill("SIGKILL");
    say("stopped");
  });
}

async function main(): Promise<void> {
  const config = loadOrExit();
  const [role, name] = process.argv.slice(2);
  if (role !== undefined) watchSupervisor();
  if (role === undefined) await supervise(config);
  else if (role === "ingress") await runIngress(config);
  else if (role === "actor" && name) await runActor(config, name);
  else {
    process.stderr.write("usage: start.js [ingress | actor <name>]\n");
    process.exit(2);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`start failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
