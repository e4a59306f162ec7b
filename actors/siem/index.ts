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
import { compileSchema, defineActor, runActor } from "../runtime/index.js";
import { claimTiming, every } from "../runtime/index.js";
import { deliveryHandler, fanoutHandler, testHandler } from "./handler.js";
import { createAssignment } from "./assignment.js";
import { announceMember, liveMembers } from "./leases.js";
import { FANOUT_CONCURRENCY, replayWindow } from "./replay.js";
import type { LoadedDestination } from "./messages.js";
import { startRetention } from "./retention.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
import { pushNetwork, type PushNetwork } from "./transport/guard.js";
import type { sendBatch } from "./transport/index.js";

/**
 * The SIEM pusher (role `siem`): the fan-out, one delivery loop per destination, the
 * "send test event" responder and the events retention job. docs/events.md explains the
 * design; in short, per-destination streams isolate destinations from each other, and
 * each destination's loop runs in the one pusher process holding its lease
 * (assignment.ts, leases.ts), which replays it from the events table when it fell behind
 * its stream's cap (replay.ts).
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
  /**
   * Lifetime of a destination's lease and of a process's membership; default half the claim
   * idle time (at least 5 s), so a dead process's destinations move before its pending
   * entries can be claimed.
   */
  leaseTtlMs?: number;
  /** Lease renewal and rebalancing period; default a sixth of the lease's lifetime. */
  balanceIntervalMs?: number;
  /** This process's name: lease owner and consumer name (default host-pid). */
  owner?: string;
  /** Monotonic milliseconds for lease validity (default performance.now). */
  monotonic?: () => number;
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

/** "Send test event" requests a pusher handles at once: each waits on a collector, up to the time-out. */
export const SIEM_TESTS_AT_ONCE = 4;
/**
 * Test events of one organization a pusher sends at once: a collector that accepts and
 * never answers holds one slot for the time-out, never all of them, and the other slots go
 * to the other organizations in turn (the runtime's `fairness`).
 */
export const SIEM_TESTS_PER_ORG = 1;
/** Requests held beyond SIEM_TESTS_AT_ONCE, so another organization's request behind one organization's run of them is read. */
export const SIEM_TEST_BACKLOG = 60;

/** The turn a test request takes: its organization, or its destination for a request published without one. */
export function siemTestParty(request: SiemTestRequest): string {
  return request.org_id === undefined ? `destination:${request.destination_id}` : String(request.org_id);
}

export interface SiemPusher extends RunningActor {
  /** Re-read the destinations now (start and stop delivery loops). */
  reload(): Promise<void>;
  /** Ids of the destinations this process delivers to. */
  running(): number[];
  /** Stops at once keeping the leases and pending entries, as a SIGKILL leaves them (tests). */
  halt(): Promise<void>;
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
  const consumerName = options.owner ?? `${hostname()}-${process.pid}`;
  // At least 5 s: a lease is given up when a third of it is left unrenewed, and a loaded
  // event loop must not give up leases it still holds (its batch would then be sent twice).
  const leaseTtlMs = options.leaseTtlMs ?? Math.max(5_000, Math.floor(options.claimIdleMs / 2));
  const balanceIntervalMs = options.balanceIntervalMs ?? Math.max(250, Math.floor(leaseTtlMs / 6));
  // Thousands of small commands per second (reads, XADDs, acks, claims): auto-pipelining
  // sends those of one event-loop turn in one write instead of one write each.
  const redis = duplicateRedis(ctx.redis, { enableAutoPipelining: true });
  redis.on("error", (error: Error) => ctx.logger.debug({ err: error }, "siem redis connection error"));
  const runDeps = { redis, keys: ctx.keys, clock: ctx.clock, logger: ctx.logger, db: ctx.db, consumerName };
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
      void promise
        .finally(() => {
          if (loadingView === loading) loadingView = null;
        })
        .catch(() => {});
    }
    return (await loadingView.promise).get(orgId) ?? [];
  };

  /** The keys kept beside a destination's stream (replay.ts): what its loop read, and its late ids. */
  const sideKeys = (stream: string) => [ctx.keys.streamSide(stream, "inhand"), ctx.keys.streamSide(stream, "late")] as const;

  // Compiled once for every destination's loop (a compile per loop is most of its start's CPU).
  const compiledDelivery = compileSchema<DestinationMessage>(destinationMessageSchema);
  const deliveryActor = (destination: LoadedDestination, onTrimmed: () => void) =>
    defineActor<DestinationMessage, Pool>({
      name: `siem-${destination.id}`,
      group: SIEM_GROUP,
      streams: (keys) => [keys.stream(destinationStreamName(destination.id))],
      schema: destinationMessageSchema,
      compiled: compiledDelivery,
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
      // Never reads past entries trimmed unread: the assignment replays them first (replay.ts).
      onTrimmed,
      // What the read took in hand, and the fan-out's late ids it passed: replay.ts.
      readTracking: sideKeys,
      handler: deliveryHandler(destination, {
        db: ctx.db,
        clock: ctx.clock,
        network,
        retry: options.retry,
        random: options.random,
        batchSize: options.batchSize,
        lingerMs: options.lingerMs,
        send: options.send,
      }),
    });

  const removeStreams = async (id: number) => {
    const stream = ctx.keys.stream(destinationStreamName(id));
    await deleteKeys(redis, [stream, ctx.keys.deadLetters(stream), ...sideKeys(stream)]);
  };
  const assignment = createAssignment({
    lease: { redis, keys: ctx.keys, owner: consumerName, ttlMs: leaseTtlMs },
    keys: ctx.keys,
    logger: ctx.logger,
    intervalMs: balanceIntervalMs,
    monotonic: options.monotonic ?? (() => performance.now()),
    load: (row) => loadDestination(ctx, row),
    runLoop: (destination, onTrimmed) => runActor(deliveryActor(destination, onTrimmed), runDeps),
    replay: {
      db: ctx.db,
      redis,
      clock: ctx.clock,
      network,
      batchSize: options.batchSize,
      send: options.send,
      // The pushers running the fan-out now, each with its in-flight messages (replay.ts).
      window: async () => replayWindow((await liveMembers({ redis, keys: ctx.keys })).length),
    },
    onRemoved: removeStreams,
  });

  let reloading: Promise<void> = Promise.resolve();
  let rows: SiemDestinationRow[] = [];
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
      if (existing.has(id) || assignment.running().includes(id)) continue;
      await deleteKeys(redis, [...names, ...sideKeys(ctx.keys.stream(destinationStreamName(id)))]);
    }
  };
  const reloadNow = async () => {
    if (stopped) return;
    rows = await allDestinations(ctx.db);
    await assignment.balance(rows);
    await assignment.checkGaps();
    await dropOrphans(new Map(rows.map((row) => [row.id, row])));
  };
  const balanceNow = async () => {
    if (!stopped) await assignment.balance(rows);
  };
  const serialized = (fn: () => Promise<void>) => {
    reloading = reloading.then(fn, fn);
    return reloading;
  };
  const reload = () => serialized(reloadNow);

  // Announced before the first round, so pushers started together see each other at once
  // instead of each taking every destination and handing most of them back.
  await announceMember({ redis, keys: ctx.keys, owner: consumerName, ttlMs: leaseTtlMs });
  // Renewal runs from the first lease taken on: the rest of the start may take a while.
  const onLeaseError = (error: unknown) => ctx.logger.warn({ err: error }, "SIEM lease round failed");
  const renewing = every(ctx.clock, balanceIntervalMs, assignment.renew, { immediate: false, onError: onLeaseError });
  await reload();
  const fanout = await runActor(
    defineActor<DestinationMessage, Pool>({
      name: "siem-fanout",
      group: SIEM_GROUP,
      streams: EVENTS_STREAM,
      schema: destinationMessageSchema,
      // Also bounds how far out of id order it appends (replay.ts, replayWindow).
      concurrency: FANOUT_CONCURRENCY,
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
      concurrency: SIEM_TESTS_AT_ONCE,
      fairness: { key: siemTestParty, perKey: SIEM_TESTS_PER_ORG, backlog: SIEM_TEST_BACKLOG },
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
  const balancing = every(ctx.clock, balanceIntervalMs, () => serialized(balanceNow), { immediate: false, onError: onLeaseError });
  const retention = startRetention(ctx, options.retentionIntervalMs);
  const timers = [periodic, renewing, balancing, retention];

  return {
    reload,
    running: assignment.running,
    async stop() {
      await Promise.all(timers.map((t) => t.stop()));
      subscriber.disconnect();
      await reloading.catch(() => {});
      stopped = true;
      await Promise.all([fanout.stop(), tester.stop(), assignment.stop()]);
      redis.disconnect();
    },
    async halt() {
      stopped = true;
      await Promise.all(timers.map((t) => t.stop()));
      subscriber.disconnect();
      await Promise.all([fanout.stop({ timeoutMs: 0 }), tester.stop({ timeoutMs: 0 }), assignment.halt()]);
      redis.disconnect();
    },
  };
}

export function startSiem(ctx: Context): Promise<RunningActor> {
  // ACTOR_CLAIM_IDLE_MS applies here too (the pusher runs its loops without startActor).
  const idle = ctx.config.actorClaimIdleMs;
  return startSiemPusher(ctx, idle === null ? {} : claimTiming(idle, DEFAULT_PUSHER.claimIntervalMs));
}
