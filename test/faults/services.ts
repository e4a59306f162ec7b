import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { waitFor } from "../helpers/gateway.js";
import { freePort } from "../../shared/platform/net/free-port.js";

export { freePort };

/**
 * Private Redis and PostgreSQL processes for the fault suite, on their own loopback
 * ports and data directories, so a test can kill, flush or stop them without touching the
 * shared servers other tests use.
 */

const run = promisify(execFile);

export interface PrivateRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  /** SIGKILL: everything in memory is gone (it keeps nothing on disk). */
  kill(): Promise<void>;
  client(): Redis;
  stop(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const clients: Redis[] = [];
  const self: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
        stdio: "ignore",
      });
      await waitFor(
        async () => {
          const probe = new Redis(port, "127.0.0.1", { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
          probe.on("error", () => {});
          try {
            await probe.connect();
            return (await probe.ping()) === "PONG";
          } catch {
            return false;
          } finally {
            probe.disconnect();
          }
        },
        10_000,
        50,
      );
    },
    async kill() {
      const dying = child;
      child = null;
      if (!dying || dying.exitCode !== null) return;
      const exited = new Promise((resolve) => dying.once("exit", resolve));
      dying.kill("SIGKILL");
      await exited;
    },
    client() {
      const redis = new Redis(self.url);
      redis.on("error", () => {});
      clients.push(redis);
      return redis;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await self.kill();
    },
  };
  await self.start();
  return self;
}

export interface PrivateRedisCluster {
  /** `redis+cluster://127.0.0.1:P1,...` (REDIS_URL's cluster form). */
  url: string;
  /** `127.0.0.1:P1,127.0.0.1:P2,...` (REDIS_CLUSTER). */
  seeds: string;
  ports: number[];
  /** A plain connection to one master, to look at what that node alone holds. */
  node(port: number): Redis;
  /** SIGKILL one master and start it again on its port and cluster config: it rejoins with its slots, and no data. */
  restart(port: number): Promise<void>;
  /** SIGKILL one node and leave it down (a replica, when there is one, takes over its slots). */
  kill(port: number): Promise<void>;
  /** Ports of the nodes answering as masters now (a replica promoted by a failover included). */
  masterPorts(): Promise<number[]>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Replicas per master (`--cluster-replicas`); 0 by default. */
  replicas?: number;
  /** cluster-node-timeout: how long a master may be unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
}

/**
 * A Redis Cluster of `masters` masters (and `replicas` replicas of each), each node a Debian
 * redis-server in cluster mode on its own loopback port (and cluster-bus port), slots spread
 * by `redis-cli --cluster create`; resolves once every node reports cluster_state:ok and
 * every replica's link to its master is up.
 */
export async function privateRedisCluster(masters = 3, options: ClusterOptions = {}): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), "faults-cluster-"));
  const replicas = options.replicas ?? 0;
  const ports: number[] = [];
  const busPorts: number[] = [];
  while (ports.length < masters * (1 + replicas)) {
    const [port, bus] = [await freePort(), await freePort()];
    if (![...ports, ...busPorts].includes(port) && ![...ports, ...busPorts].includes(bus) && port !== bus) {
      ports.push(port);
      busPorts.push(bus);
    }
  }
  const startNode = (i: number) =>
    spawn(
      "redis-server",
      [
        "--port",
        String(ports[i]),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        String(busPorts[i]),
        "--cluster-config-file",
        join(dir, `nodes-${ports[i]}.conf`),
        "--cluster-node-timeout",
        String(options.nodeTimeoutMs ?? 5000),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
  const children = ports.map((_, i) => startNode(i));
  const kill = (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    return exited;
  };
  const clients: Redis[] = [];
  const node = (port: number) => {
    const redis = new Redis(port, "127.0.0.1", { maxRetriesPerRequest: 1 });
    redis.on("error", () => {});
    clients.push(redis);
    return redis;
  };
  const probes = ports.map(node);
  const allAnswer = () =>
    waitFor(async () => (await Promise.all(probes.map((p) => p.ping().catch(() => null)))).every((r) => r === "PONG"), 10_000, 50);
  const allOk = () =>
    waitFor(
      async () => {
        const infos = await Promise.all(probes.map((p) => p.cluster("INFO").catch(() => "")));
        return infos.every((info) => String(info).includes("cluster_state:ok"));
      },
      20_000,
      100,
    );
  const replicasLinked = () =>
    waitFor(
      async () => {
        const infos = await Promise.all(probes.map((p) => p.info("replication").catch(() => "")));
        return (
          infos.filter((info) => info.includes("role:slave")).length === masters * replicas &&
          infos.every((info) => !info.includes("role:slave") || info.includes("master_link_status:up"))
        );
      },
      30_000,
      100,
    );
  const alive = (i: number) => children[i].exitCode === null && children[i].signalCode === null;
  const self: PrivateRedisCluster = {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(","),
    ports,
    node,
    async restart(port) {
      const i = ports.indexOf(port);
      await kill(children[i]);
      children[i] = startNode(i);
      await allAnswer();
      await allOk();
    },
    async kill(port) {
      await kill(children[ports.indexOf(port)]);
    },
    async masterPorts() {
      const roles = await Promise.all(
        ports.map(async (_, i) => (alive(i) ? String(await probes[i].info("replication").catch(() => "")) : "")),
      );
      return ports.filter((_, i) => roles[i].includes("role:master"));
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await Promise.all(children.map(kill));
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await allAnswer();
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    await allOk();
    await replicasLinked();
  } catch (error) {
    await self.stop();
    throw error;
  }
  return self;
}

export interface PrivatePostgres {
  /** A URL of database `name` on this server. */
  url(name: string): string;
  port: number;
  start(): Promise<void>;
  /** Fast shutdown: connections are closed, the data stays. */
  halt(): Promise<void>;
  stop(): Promise<void>;
}

const PG_BIN = "/usr/lib/postgresql";

async function pgBin(tool: string): Promise<string> {
  const { stdout } = await run("ls", [PG_BIN]);
  const version = stdout
    .split("\n")
    .filter(Boolean)
    .sort((a, b) => Number(b) - Number(a))[0];
  return join(PG_BIN, version, "bin", tool);
}

/** initdb as the postgres OS user (PostgreSQL refuses to run as root), trust auth, superuser `root`. */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "faults-pg-"));
  await chown(dir, ...(await postgresIds()));
  const data = join(dir, "data");
  const asPostgres = async (tool: string, args: string[]) => run("runuser", ["-u", "postgres", "--", await pgBin(tool), ...args]);
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "root", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const self: PrivatePostgres = {
    port,
    url: (name) => `postgres://root@127.0.0.1:${port}/${name}`,
    async start() {
      await asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
    },
    async halt() {
      await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    async stop() {
      await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  await self.start();
  return self;
}

async function postgresIds(): Promise<[number, number]> {
  const [uid, gid] = await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]);
  return [Number(uid.stdout.trim()), Number(gid.stdout.trim())];
}
