import { hostname } from "node:os";
import { readFileSync } from "node:fs";
import type { Context } from "../../shared/platform/context.js";
import { unseal } from "../../shared/platform/crypto/seal.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import {
  allDestinations,
  existingDestinationIds,
  type SiemDestinationRow,
  tokenAad,
  EVENTS_STREAM,
  EVENTS_STREAM_MAX_LEN,
  parseTarget,
  type DestinationMessage,
  destinationMessageSchema,
  destinationStreamName,
  SIEM_GROUP,
  SIEM_TEST_STREAM,
  siemTestSchema,
  type SiemTestRequest,
} from "../../shared/events/index.js";
import { outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import { deleteKeys, duplicateRedis, scanKeys } from "../../shared/platform/redis/client.js";
import type { RunningActor } from "../index.js";
import { type ActorHandle, defineActor, runActor } from "../runtime/index.js";
import { claimTiming, every } from "../runtime/index.js";
import { deliveryHandler, fanoutHandler, testHandler } from "./handler.js";
import type { LoadedDestination } from "./messages.js";
import { startRetention } from "./retention.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
import { pushNetwork, type PushNetwork } from "./transport/guard.js";
import type { sendBatch } from "./transport/index.js";

/**
 * The SIEM pusher (role `siem`): the fan-out, one delivery loop per destination, the
 * "send test event" responder and the events retention job. docs/events.md explains the
 * design; in short, per-destination streams isolate destinations from each other.
 */
export interface PusherOptions {
  /** Events per request (HEC, _bulk, http) or per connection (syslog). */
  batchSize: number;
  /** A batch that is not full goes this long after its first event arrived. */
  lingerMs: number;
  retry: RetryPolicy;
  /** A delivery left pending this long by a dead pusher is taken over (XAUTOCLAIM). */
  claimIdleMs: number;
  claimIntervalMs: number;
  /** Destinations are also re-read this often (besides the change notifications). */
  reloadMs: number;
  /** Per request or syslog connection. */
  timeoutMs: number;
  /** Approximate cap of each destination's stream. */
  destinationMaxLen: number;
  random: () => number;
  retentionIntervalMs: number;
  /** Tests wrap the transport (count calls, fail on purpose). */
  send?: typeof sendBatch;
  network?: PushNetwork;
}

export const DEFAULT_PUSHER: PusherOptions = {
  batchSize: 500,
  lingerMs: 200,
  retry: DEFAULT_RETRY,
  claimIdleMs: 60_000,
  claimIntervalMs: 10_000,
  reloadMs: 30_000,
  timeoutMs: 10_000,
  destinationMaxLen: EVENTS_STREAM_MAX_LEN,
  random: Math.random,
  retentionIntervalMs: 3_600_000,
};

export interface SiemPusher extends RunningActor {
  /** Re-read the destinations now (start and stop delivery loops). */
  reload(): Promise<void>;
  /** Ids of the destinations this process delivers to. */
  running(): number[];
}

function networkOf(ctx: Context, timeoutMs: number): PushNetwork {
  const config = ctx.config;
  return pushNetwork({
    outbound: outboundPolicyOf("siem", config),
    resolver: config.dnsResolver,
    caPem: config.scanCaFile ? readFileSync(config.scanCaFile, "utf8") : null,
    timeoutMs,
    hostname: new URL(config.siteUrl).hostname,
  });
}

export function loadDestination(ctx: Pick<Context, "masterSecret">, row: SiemDestinationRow): LoadedDestination {
  const parsed = parseTarget(row.kind, row.url);
  if (!parsed.ok) throw new Error(`destination ${row.id}: ${parsed.detail}`);
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    url: row.url,
    target: parsed.target,
    token: row.token_sealed ? unseal(ctx.masterSecret, row.token_sealed, tokenAad(row.org_id, row.id)) : null,
    index: row.index_name,
  };
}

export async function startSiemPusher(ctx: Context, overrides: Partial<PusherOptions> = {}): Promise<SiemPusher> {
  const options: PusherOptions = { ...DEFAULT_PUSHER, ...overrides };
  const network = options.network ?? networkOf(ctx, options.timeoutMs);
  const consumerName = `${hostname()}-${process.pid}`;
  // Thousands of small commands per second (reads, XADDs, acks, claims): auto-pipelining
  // sends those of one event-loop turn in one write instead of one write each.
  const redis = duplicateRedis(ctx.redis, { enableAutoPipelining: true });
  redis.on("error", (error: Error) => ctx.logger.debug({ err: error }, "siem redis connection error"));
  const runDeps = { redis, keys: ctx.keys, clock: ctx.clock, logger: ctx.logger, db: ctx.db, consumerName };
  const loops = new Map<number, ActorHandle>();
  let stopped = false;

  // The fan-out's view: reloaded whenever the version key moved (bumped after every admin
  // change commits). A load starts after the version was read, so what it reads is at
  // least that new; a caller never joins a load started for an older version.
  let fanoutView: { version: number; byOrg: Map<number, number[]> } | null = null;
  let loadingView: { version: number; promise: Promise<Map<number, number[]>> } | null = null;
  const destinationsOf = async (orgId: number): Promise<readonly number[]> => {
    const version = Number((await redis.get(ctx.keys.siemVersion())) ?? 0);
    if (fanoutView !== null && fanoutView.version === version) return fanoutView.byOrg.get(orgId) ?? [];
    if (loadingView === null || loadingView.version !== version) {
      const promise = allDestinations(ctx.db).then((rows) => {
        const byOrg = new Map<number, number[]>();
        for (const row of rows) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), row.id]);
        if (fanoutView === null || fanoutView.version <= version) fanoutView = { version, byOrg };
        return byOrg;
      });
      const loading = { version, promise };
      loadingView = loading;
      void promise.finally(() => {
        if (loadingView === loading) loadingView = null;
      }).catch(() => {});
    }
    return (await loadingView.promise).get(orgId) ?? [];
  };

  const deliveryActor = (destination: LoadedDestination) =>
    defineActor<DestinationMessage, Pool>({
      name: `siem-${destination.id}`,
      group: SIEM_GROUP,
      streams: (keys) => [keys.stream(destinationStreamName(destination.id))],
      schema: destinationMessageSchema,
      // Two batches in hand: one in flight, the next filling.
      concurrency: options.batchSize * 2,
      maxAttempts: options.retry.maxAttempts,
      backoffBaseMs: options.retry.backoffBaseMs,
      backoffMaxMs: options.retry.backoffMaxMs,
      claimIdleMs: options.claimIdleMs,
      claimIntervalMs: options.claimIntervalMs,
      blockMs: 2_000,
      // A destination down for hours dead-letters as many events: keep them all (the default is 10 000).
      deadLetterMaxLen: options.destinationMaxLen,
      handler: deliveryHandler(destination, {
        db: ctx.db, clock: ctx.clock, network, retry: options.retry, random: options.random,
        batchSize: options.batchSize, lingerMs: options.lingerMs, send: options.send,
      }),
    });

  let reloading: Promise<void> = Promise.resolve();
  const streamPrefix = ctx.keys.stream(destinationStreamName(0)).slice(0, -1);
  /**
   * Streams of destinations that no longer exist (a fan-out racing a delete, a pusher down
   * during one). `wanted` was read before the sweep, and a destination committed since then
   * already has a stream (the fan-out appends to it before its loop starts): PostgreSQL is
   * asked again, after the SCAN, and only streams of ids it no longer holds are dropped.
   * That is safe because a stream only ever exists for a destination that committed, and ids
   * are never reused: an id absent at this last look was deleted for good.
   */
  const dropOrphans = async (wanted: ReadonlyMap<number, unknown>) => {
    const candidates = new Map<number, string[]>();
    for await (const names of scanKeys(redis, `${streamPrefix}*`)) {
      for (const name of names) {
        const id = Number(name.slice(streamPrefix.length).replace(/:dead$/, ""));
        if (Number.isInteger(id) && id > 0 && !wanted.has(id)) candidates.set(id, [...(candidates.get(id) ?? []), name]);
      }
    }
    if (candidates.size === 0) return;
    const existing = await existingDestinationIds(ctx.db, [...candidates.keys()]);
    for (const [id, names] of candidates) {
      if (!existing.has(id) && !loops.has(id)) await deleteKeys(redis, names);
    }
  };
  const reloadNow = async () => {
    const rows = await allDestinations(ctx.db);
    const wanted = new Map(rows.map((row) => [row.id, row]));
    for (const [id, handle] of loops) {
      if (wanted.has(id)) continue;
      loops.delete(id);
      await handle.stop();
      const stream = ctx.keys.stream(destinationStreamName(id));
      await deleteKeys(redis, [stream, ctx.keys.deadLetters(stream)]);
      ctx.logger.info({ destination: id }, "SIEM destination removed");
    }
    for (const [id, row] of wanted) {
      if (loops.has(id) || stopped) continue;
      try {
        loops.set(id, await runActor(deliveryActor(loadDestination(ctx, row)), runDeps));
      } catch (error) {
        ctx.logger.error({ err: error, destination: id }, "SIEM destination cannot start");
      }
    }
    await dropOrphans(wanted);
  };
  const reload = () => {
    reloading = reloading.then(reloadNow, reloadNow);
    return reloading;
  };

  await reload();
  const fanout = await runActor(
    defineActor<DestinationMessage, Pool>({
      name: "siem-fanout",
      group: SIEM_GROUP,
      streams: EVENTS_STREAM,
      schema: destinationMessageSchema,
      concurrency: 256,
      maxAttempts: 20,
      backoffBaseMs: 500,
      backoffMaxMs: 30_000,
      claimIdleMs: options.claimIdleMs,
      claimIntervalMs: options.claimIntervalMs,
      handler: fanoutHandler({ destinationsOf }, options.destinationMaxLen),
    }),
    runDeps,
  );
  const tester = await runActor(
    defineActor<SiemTestRequest, Pool>({
      name: "siem-test",
      streams: SIEM_TEST_STREAM,
      schema: siemTestSchema,
      concurrency: 4,
      maxAttempts: 1,
      startId: "$",
      handler: testHandler((row) => loadDestination(ctx, row), { network, clock: ctx.clock, send: options.send }),
    }),
    runDeps,
  );

  const subscriber = duplicateRedis(ctx.redis);
  subscriber.on("error", (error: Error) => ctx.logger.debug({ err: error }, "siem subscriber error"));
  subscriber.on("message", () => void reload().catch((error: unknown) => ctx.logger.warn({ err: error }, "SIEM reload failed")));
  await subscriber.subscribe(ctx.keys.siemChanged());
  const periodic = every(ctx.clock, options.reloadMs, reload, {
    immediate: false,
    onError: (error) => ctx.logger.warn({ err: error }, "SIEM reload failed"),
  });
  const retention = startRetention(ctx, options.retentionIntervalMs);

  return {
    reload,
    running: () => [...loops.keys()].sort((a, b) => a - b),
    async stop() {
      stopped = true;
      await periodic.stop();
      await retention.stop();
      subscriber.disconnect();
      await reloading.catch(() => {});
      await Promise.all([fanout.stop(), tester.stop(), ...[...loops.values()].map((h) => h.stop())]);
      loops.clear();
      redis.disconnect();
    },
  };
}

export function startSiem(ctx: Context): Promise<RunningActor> {
  // ACTOR_CLAIM_IDLE_MS applies here too (the pusher runs its loops without startActor).
  const idle = ctx.config.actorClaimIdleMs;
  return startSiemPusher(ctx, idle === null ? {} : claimTiming(idle, DEFAULT_PUSHER.claimIntervalMs));
}
