import { Cluster, Redis as SingleRedis, type RedisOptions } from "ioredis";

/**
 * A connection to one Redis server or to a Redis Cluster. The commands the code sends are
 * the same on both (ioredis routes each keyed command to the master of its slot); what
 * differs is written once here: blocking connections and their CLIENT UNBLOCK, SCAN over a
 * prefix, deleting keys of several slots. A MULTI or a pipeline on a cluster must stay in
 * one slot (MULTI) or on one node (pipeline): code that writes keys of several slots sends
 * separate commands instead (docs/operations.md, "Redis Cluster").
 */
export type Redis = SingleRedis | Cluster;

/** `redis+cluster://[user:password@]host:port,host:port,...`: REDIS_URL's form of REDIS_CLUSTER. */
export const CLUSTER_SCHEME = "redis+cluster:";

export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
}

/** The seed nodes of a `redis+cluster://` URL; null for any other URL; throws on a malformed list. */
export function parseClusterUrl(url: string): ClusterTarget | null {
  if (!url.startsWith(`${CLUSTER_SCHEME}//`)) return null;
  let rest = url.slice(CLUSTER_SCHEME.length + 2).replace(/\/+$/, "");
  const target: ClusterTarget = { nodes: [] };
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    const [user, ...password] = rest.slice(0, at).split(":");
    if (user !== "") target.username = decodeURIComponent(user);
    if (password.length > 0) target.password = decodeURIComponent(password.join(":"));
    rest = rest.slice(at + 1);
  }
  for (const node of rest.split(",")) {
    const match = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/.exec(node.trim());
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) throw new Error(`expected host:port, got ${JSON.stringify(node)}`);
    target.nodes.push({ host: match[1].replace(/^\[|\]$/g, ""), port: Number(match[2]) });
  }
  return target;
}

const nodeOptions = (name: string): RedisOptions => ({
  connectionName: name,
  maxRetriesPerRequest: 2,
  enableAutoPipelining: false,
  retryStrategy: (times) => Math.min(times * 100, 2000),
  lazyConnect: false,
});

/**
 * A cluster client that fails fast like the single-server one: commands wait in the offline
 * queue for the first connection only (a process's first commands are sent before the slot
 * map is known); once the cluster was ready, a command sent while it is unreachable fails at
 * once instead of queueing until it returns. duplicateRedis keeps this for every duplicate.
 */
function failFast(cluster: Cluster): Cluster {
  cluster.options.enableOfflineQueue = true;
  cluster.once("ready", () => {
    cluster.options.enableOfflineQueue = false;
  });
  return cluster;
}

/** A Redis connection that fails fast instead of queueing forever when Redis is down. */
export function createRedis(url: string, name: string): Redis {
  const cluster = parseClusterUrl(url);
  if (cluster === null) return new SingleRedis(url, nodeOptions(name));
  return failFast(
    new Cluster(cluster.nodes, {
      redisOptions: { ...nodeOptions(name), username: cluster.username, password: cluster.password },
      enableAutoPipelining: false,
      clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
      // A slot being migrated: a script whose keys are split between the two masters gets
      // TRYAGAIN (nothing ran) and is sent again every 100 ms; with ASK and MOVED hops it may
      // take 16 redirections, so a call waits at most ~1.6 s for one migration step before it
      // fails as a fault (5xx), never as a refusal (docs/operations.md, "Slot migration").
      retryDelayOnTryAgain: 100,
      maxRedirections: 16,
    }),
  );
}

export function isCluster(redis: Redis): redis is Cluster {
  return redis instanceof Cluster;
}

/** A second connection like `redis` (same server or cluster, same options), for blocking commands and pub/sub. */
export function duplicateRedis(redis: Redis, options: { enableAutoPipelining?: boolean } = {}): Redis {
  return isCluster(redis) ? failFast(redis.duplicate([], options)) : redis.duplicate(options);
}

async function ready(cluster: Cluster): Promise<void> {
  if (cluster.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const onReady = () => {
      cluster.off("end", onEnd);
      resolve();
    };
    const onEnd = () => {
      cluster.off("ready", onReady);
      reject(new Error("Redis Cluster connection ended before it was ready"));
    };
    cluster.once("ready", onReady);
    cluster.once("end", onEnd);
  });
}

/** The master servers: the one server, or every master of the cluster (each holds its slots' keys). */
export async function masters(redis: Redis): Promise<SingleRedis[]> {
  if (!isCluster(redis)) return [redis];
  await ready(redis);
  return redis.nodes("master");
}

const nodeKey = (node: SingleRedis) => `${node.options.host}:${node.options.port}`;

/**
 * Every key matching `pattern`, a batch at a time: SCAN on each master in turn (a cluster's
 * SCAN sees one node's keys only).
 */
export async function* scanKeys(redis: Redis, pattern: string, count = 1000): AsyncGenerator<string[]> {
  for (const node of await masters(redis)) {
    let cursor = "0";
    do {
      const [next, found] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      if (found.length > 0) yield found;
    } while (cursor !== "0");
  }
}

/**
 * Whether every replica connected to the master holding each of `names` has acknowledged
 * the writes this client sent it so far (WAIT, on the connection that wrote them: a
 * pipeline goes to the node of its first key, and a keyless command in it goes along).
 * True at once for a master with no replica. Used after a projection (a revocation, a
 * suspension, any key or organization change): a failover promotes a replica, and a
 * change it had not received would be undone (docs/operations.md, "Failover"). WAIT holds
 * its connection for up to `timeoutMs` while a replica lags; replicas answer the GETACK it
 * sends within a round trip, so normally it returns at once.
 */
export async function replicated(redis: Redis, names: readonly string[], timeoutMs: number): Promise<boolean> {
  const second = async (pipeline: ReturnType<Redis["pipeline"]>): Promise<unknown> => {
    const [error, reply] = (await pipeline.exec())?.[1] ?? [new Error("empty pipeline reply"), null];
    if (error) throw error;
    return reply;
  };
  for (const name of names) {
    const info = String(await second(redis.pipeline().exists(name).info("replication")));
    const replicas = Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
    if (replicas === 0) continue;
    if (Number(await second(redis.pipeline().exists(name).call("WAIT", replicas, timeoutMs))) < replicas) return false;
  }
  return true;
}

/** DEL of keys that may sit in different slots: one command on a server, one per key on a cluster. */
export async function deleteKeys(redis: Redis, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  if (!isCluster(redis)) return redis.del(...names);
  const deleted = await Promise.all(names.map((name) => redis.del(name)));
  return deleted.reduce((a, b) => a + b, 0);
}

/**
 * A connection of its own for blocking commands (XREADGROUP BLOCK, BLPOP), which would
 * stall every command queued behind them on a shared connection. `unblock` ends a blocking
 * command in progress at once: CLIENT UNBLOCK with the connection's id, sent over another
 * connection (`via`) to the server holding it. Ids are per server and change on reconnect,
 * so they are learnt on every (re)connection of every node, before any command blocks.
 */
export interface BlockingConnection {
  readonly redis: Redis;
  unblock(via: Redis): Promise<void>;
  disconnect(): void;
}

export async function openBlocking(redis: Redis, onError: (error: Error) => void): Promise<BlockingConnection> {
  const blocking = duplicateRedis(redis);
  blocking.on("error", onError);
  const ids = new Map<string, number>();
  const learn = async (node: SingleRedis) => {
    ids.set(nodeKey(node), Number(await node.client("ID")));
  };
  const watch = (node: SingleRedis) => node.on("ready", () => void learn(node).catch(() => {}));
  try {
    if (isCluster(blocking)) {
      blocking.on("+node", watch);
      for (const node of await masters(blocking)) {
        watch(node);
        await learn(node);
      }
    } else {
      watch(blocking);
      await learn(blocking);
    }
  } catch (error) {
    blocking.disconnect();
    throw error;
  }
  return {
    redis: blocking,
    async unblock(via: Redis) {
      // A cluster down at stop: nothing to send it; the blocked read ends with the connection.
      if (isCluster(via) && via.status !== "ready") return;
      const servers = new Map((await masters(via)).map((node) => [nodeKey(node), node]));
      await Promise.all([...ids].map(([key, id]) => (isCluster(via) ? servers.get(key) : via)?.client("UNBLOCK", id).catch(() => 0)));
    },
    disconnect: () => blocking.disconnect(),
  };
}

/** Deletes every key matching `pattern` on every master (cleanup of a benchmark's or test's prefix). */
export async function deleteMatching(redis: Redis, pattern: string): Promise<void> {
  for await (const found of scanKeys(redis, pattern)) await deleteKeys(redis, found);
}
