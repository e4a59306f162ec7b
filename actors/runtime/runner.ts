/**
 * The consumer-group loop, written once. One runner is one consumer of one group on
 * one or more streams. Three activities share its concurrency slots:
 *
 * - the reader: XREADGROUP BLOCK on a connection of its own (a blocking read would stall
 *   every other command queued on the shared connection), asking only for as many
 *   messages as there are free slots, so a slow handler slows intake instead of piling
 *   up delivered-but-untouched entries. On a Redis Cluster one XREADGROUP may only name
 *   streams of one slot, so there each stream has a reader (and connection) of its own.
 *   An actor with `onTrimmed` reads each stream through trimmed-read.ts instead (never past
 *   entries trimmed unread) and waits on its blocking connection with XREAD;
 * - the claimer: XAUTOCLAIM of entries idle longer than claimIdleMs, i.e. left pending by
 *   a consumer that died (or stalled); also how a crashed consumer's retries happen;
 * - the heartbeat: XCLAIM JUSTID of the entries this runner holds, every claimIdleMs/3.
 *   It resets their idle time without counting a delivery, so a handler that runs (or
 *   backs off) longer than claimIdleMs is not mistaken for a dead one and done twice.
 *
 * A message keeps its slot from delivery to ack or dead letter, backoff included: a
 * failing dependency slows the actor instead of flooding it. Reader and claimer each
 * take at most the free slots they saw (per stream, for the reader), so a moment of
 * overlap can put a few more entries in hand than `concurrency`; the run queue still runs
 * at most `concurrency` handlers, and the extra entries wait under the heartbeat. With
 * `fairness` the runner holds up to `backlog` more entries, and the run queue
 * (fair-queue.ts) takes turns between their keys.
 */
import { setMaxListeners } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { type BlockingConnection, isCluster, openBlocking } from "../../shared/platform/redis/client.js";
import { type Actor, type BaseDeps, compileSchema, type RunDeps, resolveStreams } from "./define.js";
import { createCounters, type StreamCounters } from "./metrics.js";
import { createAcker } from "./acks.js";
import { createFairQueue } from "./fair-queue.js";
import { decodeFields } from "../../shared/platform/streams/envelope.js";
import { createProcessor, type Delivery } from "./process-message.js";
import {
  ensureGroup,
  isNoGroupError,
  parseAutoClaim,
  parsePendingEntries,
  parseReadGroup,
} from "../../shared/platform/streams/redis-replies.js";
import { type GroupStats, streamStats } from "../../shared/platform/streams/stats.js";
import { readUnlessTrimmed } from "./trimmed-read.js";

/** How often stop() repeats CLIENT UNBLOCK while a read loop has not returned. */
const UNBLOCK_RETRY_MS = 100;

export interface StopResult {
  /** Every in-flight message finished (acked, dead-lettered or left for a retry) in time. */
  drained: boolean;
  /** Messages still running when the drain timed out: left pending, others will claim them. */
  abandoned: number;
}

export interface StreamMetrics {
  stream: string;
  /** This runner's counts since it started. */
  counters: StreamCounters;
  length: number;
  deadLetters: number | null;
  /** The group as Redis sees it (all consumers); null if the group is gone. */
  group: GroupStats | null;
}

export interface ActorMetrics {
  actor: string;
  group: string;
  consumer: string;
  inFlight: number;
  streams: StreamMetrics[];
}

export interface ActorHandle {
  readonly actor: string;
  readonly group: string;
  readonly consumer: string;
  readonly streams: readonly string[];
  /** Stop reading, finish in-flight messages (bounded by timeoutMs, default drainTimeoutMs). */
  stop(options?: { timeoutMs?: number }): Promise<StopResult>;
  metrics(): Promise<ActorMetrics>;
}

interface Repeater {
  stop(): Promise<void>;
}

const entryKey = (stream: string, id: string) => `${stream}\n${id}`;

export async function runActor<T, Db>(actor: Actor<T, Db>, deps: RunDeps<Db>): Promise<ActorHandle> {
  const { redis, keys, clock, consumerName: consumer } = deps;
  // RunDeps<Db> makes `db` required exactly when Db excludes undefined; inside this
  // generic function TypeScript cannot resolve that conditional, hence the widening.
  const db = (deps as BaseDeps & { db?: Db }).db as Db;
  const group = actor.group;
  const streams = resolveStreams(actor.streams, keys);
  if (streams.length === 0) throw new Error(`actor ${actor.name}: no streams`);
  const logger = deps.logger.child({ actor: actor.name, group, consumer });

  const { ajv, validate } = actor.compiled ?? compileSchema<T>(actor.schema);
  for (const stream of streams) await ensureGroup(redis, stream, group, actor.startId, keys.streamRegistry());

  const readerStreams = isCluster(redis) ? streams.map((stream) => [stream]) : [streams];
  const readers: BlockingConnection[] = [];
  try {
    for (let i = 0; i < readerStreams.length; i++) {
      readers.push(await openBlocking(redis, (error: Error) => logger.warn({ error: error.message }, "blocking connection error")));
    }
  } catch (error) {
    for (const reader of readers) reader.disconnect();
    throw error;
  }

  const counters = createCounters(actor.name, group, streams, { registry: deps.registry, prefix: keys.prefix });
  const fairness = actor.fairness;
  const queue = createFairQueue(actor.concurrency, fairness?.perKey ?? actor.concurrency);
  const inHandLimit = actor.concurrency + (fairness?.backlog ?? 0);
  const active = new Map<string, Delivery>();
  const handlerAbort = new AbortController();
  const stopAbort = new AbortController();
  let abandoned = false;
  let slotWaiters: (() => void)[] = [];

  const wakeSlotWaiters = () => {
    const waiters = slotWaiters;
    slotWaiters = [];
    for (const wake of waiters) wake();
  };
  stopAbort.signal.addEventListener("abort", wakeSlotWaiters);
  // Every message waiting out a backoff listens for stop: up to `concurrency` of them at once.
  setMaxListeners(actor.concurrency + 16, stopAbort.signal);

  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (stopAbort.signal.aborted) return resolve(false);
      const onStop = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        stopAbort.signal.removeEventListener("abort", onStop);
        resolve(true);
      }, ms);
      stopAbort.signal.addEventListener("abort", onStop, { once: true });
    });

  const processMessage = createProcessor({
    actor,
    redis,
    keys,
    clock,
    logger,
    db,
    consumer,
    ajv,
    validate,
    counters,
    signal: handlerAbort.signal,
    stopping: () => stopAbort.signal.aborted,
    abandoned: () => abandoned,
    sleep,
    ack: createAcker(redis, group),
  });

  /** The party a message belongs to for the run queue's turns; "" without fairness, or for a message that will be dead-lettered. */
  const partyOf = (delivery: Delivery): string => {
    if (fairness === undefined || delivery.fields === null) return "";
    const decoded = decodeFields(delivery.fields);
    return decoded.ok && validate(decoded.envelope.payload) ? fairness.key(decoded.envelope.payload) : "";
  };

  const dispatch = (delivery: Delivery) => {
    const key = entryKey(delivery.stream, delivery.id);
    if (active.has(key)) return;
    active.set(key, delivery);
    const release = () => {
      active.delete(key);
      wakeSlotWaiters();
    };
    queue.add(
      partyOf(delivery),
      async () => {
        try {
          await processMessage(delivery);
        } catch (error) {
          // A fault (Redis down mid-ack): the entry stays pending and will be claimed again.
          if (!abandoned)
            logger.error({ err: error, stream: delivery.stream, messageId: delivery.id }, "message left pending after a fault");
        } finally {
          release();
        }
      },
      release,
    );
  };

  const freeSlots = () => inHandLimit - active.size;

  /** Reads once; resolves with the number of entries it brought. */
  const readOnce = async (blocking: BlockingConnection, names: string[], free: number): Promise<number> => {
    let reply: unknown;
    try {
      // COUNT applies per stream (and per reader): with several streams a read can bring up
      // to free × streams entries; they wait in the queue, covered by the heartbeat.
      reply = await blocking.redis.xreadgroup(
        "GROUP",
        group,
        consumer,
        "COUNT",
        free,
        "BLOCK",
        actor.blockMs,
        "STREAMS",
        ...names,
        ...names.map(() => ">"),
      );
    } catch (error) {
      if (stopAbort.signal.aborted) return 0;
      if (!isNoGroupError(error)) throw error;
      // Redis lost the stream or the group (flushed, restarted empty): make them again.
      logger.warn("stream or group missing, re-creating");
      for (const stream of names) await ensureGroup(redis, stream, group, actor.startId, keys.streamRegistry());
      return 0;
    }
    // Entries delivered even as stop() began are ours now: they are handled in the drain.
    let brought = 0;
    for (const { stream, entries } of parseReadGroup(reply)) {
      for (const entry of entries) dispatch({ stream, id: entry.id, fields: entry.fields, deliveries: 1 });
      brought += entries.length;
    }
    return brought;
  };

  /** Streams of an `onTrimmed` actor found with a hole: no longer read. */
  const trimmed = new Set<string>();

  /**
   * Reads once for an actor with `onTrimmed`: each stream through the script, which reads
   * nothing past a hole; when none brought anything, a blocking XREAD after each group
   * cursor waits for new entries without consuming them (the next round reads them through
   * the script, so a trim during the wait is seen too). Resolves with the entries brought.
   */
  const readOnceUnlessTrimmed = async (blocking: BlockingConnection, names: string[], free: number): Promise<number> => {
    const open = names.filter((stream) => !trimmed.has(stream));
    if (open.length === 0) {
      // Every stream waits for its hole to be filled, by whoever runs the actor: until stop().
      await sleep(actor.blockMs);
      return 0;
    }
    let brought = 0;
    const idle: { stream: string; cursor: string }[] = [];
    for (const stream of open) {
      let read: Awaited<ReturnType<typeof readUnlessTrimmed>>;
      try {
        read = await readUnlessTrimmed(redis, stream, group, consumer, free, actor.readTracking?.(stream));
      } catch (error) {
        if (stopAbort.signal.aborted) return brought;
        if (!isNoGroupError(error)) throw error;
        logger.warn("stream or group missing, re-creating");
        await ensureGroup(redis, stream, group, actor.startId, keys.streamRegistry());
        return brought;
      }
      if (read.trimmed) {
        trimmed.add(stream);
        logger.warn({ stream }, "entries were trimmed before this group read them: no longer reading the stream");
        actor.onTrimmed?.(stream);
        continue;
      }
      for (const entry of read.entries) dispatch({ stream, id: entry.id, fields: entry.fields, deliveries: 1 });
      brought += read.entries.length;
      if (read.entries.length === 0) idle.push({ stream, cursor: read.cursor });
    }
    if (brought === 0 && idle.length > 0 && !stopAbort.signal.aborted) {
      try {
        await blocking.redis.xread(
          "COUNT",
          1,
          "BLOCK",
          actor.blockMs,
          "STREAMS",
          ...idle.map((i) => i.stream),
          ...idle.map((i) => i.cursor),
        );
      } catch (error) {
        if (!stopAbort.signal.aborted) throw error;
      }
    }
    return brought;
  };

  const readLoop = async (blocking: BlockingConnection, names: string[]) => {
    while (!stopAbort.signal.aborted) {
      const free = freeSlots();
      if (free <= 0) {
        await new Promise<void>((resolve) => slotWaiters.push(resolve));
        continue;
      }
      try {
        // A read that brought something is followed by a pause (readPauseMs), so the next
        // brings what a busy stream gathered meanwhile in one round trip, acked in one XACK.
        const read = actor.onTrimmed === undefined ? readOnce : readOnceUnlessTrimmed;
        if ((await read(blocking, names, free)) > 0 && actor.readPauseMs > 0) await sleep(actor.readPauseMs);
      } catch (error) {
        // Redis unreachable (or a reply we cannot parse): keep the consumer alive, pause, retry.
        logger.error({ err: error }, "reading the streams failed");
        await sleep(actor.errorDelayMs);
      }
    }
  };

  const cursors = new Map<string, string>(streams.map((stream) => [stream, "0-0"]));
  const claimIdle = async () => {
    for (const stream of streams) {
      const free = freeSlots();
      if (free <= 0 || stopAbort.signal.aborted) return;
      const reply: unknown = await redis.xautoclaim(
        stream,
        group,
        consumer,
        actor.claimIdleMs,
        cursors.get(stream) ?? "0-0",
        "COUNT",
        free,
      );
      const { cursor, entries, deleted } = parseAutoClaim(reply);
      cursors.set(stream, cursor);
      // Pending entries the cap trimmed (XAUTOCLAIM drops them from the group): a hole like
      // one found by the read, for whoever runs an `onTrimmed` actor to fill.
      if (deleted.length > 0 && actor.onTrimmed !== undefined && !trimmed.has(stream)) {
        trimmed.add(stream);
        logger.warn(
          { stream, deleted: deleted.length },
          "pending entries were trimmed before they were handled: no longer reading the stream",
        );
        actor.onTrimmed(stream);
      }
      // Our own entries come back only if a heartbeat was late; they are in hand already.
      const fresh = entries.filter((entry) => !active.has(entryKey(stream, entry.id)));
      if (fresh.length === 0) continue;
      const pipeline = redis.pipeline();
      for (const entry of fresh) pipeline.xpending(stream, group, entry.id, entry.id, 1);
      const counts = (await pipeline.exec()) ?? [];
      fresh.forEach((entry, i) => {
        const [error, pending] = counts[i] ?? [null, []];
        const deliveries = error === null ? (parsePendingEntries(pending)[0]?.deliveries ?? 1) : 1;
        counters.inc(stream, "claimed");
        logger.info({ stream, messageId: entry.id, deliveries }, "claimed an idle message");
        dispatch({ stream, id: entry.id, fields: entry.fields, deliveries });
      });
    }
  };

  const heartbeat = async () => {
    const byStream = new Map<string, string[]>();
    for (const { stream, id } of active.values()) byStream.set(stream, [...(byStream.get(stream) ?? []), id]);
    for (const [stream, ids] of byStream) await redis.call("XCLAIM", stream, group, consumer, 0, ...ids, "JUSTID");
  };

  const refreshGauges = async () => {
    for (const stream of streams) counters.record(await streamStats(redis, stream, keys));
  };

  // setTimeout chains rather than setInterval: a slow round never overlaps the next.
  const repeat = (name: string, intervalMs: number, fn: () => Promise<void>, immediate: boolean): Repeater => {
    let stopped = false;
    let running: Promise<void> | null = null;
    let timer: NodeJS.Timeout;
    const tick = () => {
      running = fn()
        .catch((error: unknown) => {
          if (!stopped) logger.error({ err: error }, `${name} failed`);
        })
        .finally(() => {
          running = null;
          if (!stopped) timer = setTimeout(tick, intervalMs);
        });
    };
    timer = setTimeout(tick, immediate ? 0 : intervalMs);
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  };

  const reading = Promise.all(readers.map((reader, i) => readLoop(reader, readerStreams[i])));
  const claimer = repeat("claim", actor.claimIntervalMs, claimIdle, true);
  const beat = repeat("heartbeat", Math.max(1, Math.floor(actor.claimIdleMs / 3)), heartbeat, false);
  const gauges = deps.registry === undefined ? null : repeat("stats", actor.statsIntervalMs, refreshGauges, true);
  logger.info({ streams }, "actor started");

  let stopping: Promise<StopResult> | null = null;
  const stop = (options: { timeoutMs?: number } = {}): Promise<StopResult> => {
    stopping ??= (async () => {
      const timeoutMs = options.timeoutMs ?? actor.drainTimeoutMs;
      stopAbort.abort();
      let read = false;
      const readingDone = reading.then(() => {
        read = true;
      });
      // A blocking read sent just before the abort can reach the server after the UNBLOCK
      // (another connection): it would wait out its blockMs. Unblocked again until the loops return.
      const unblockUntilRead = async () => {
        while (!read && !abandoned) {
          await Promise.all(readers.map((reader) => reader.unblock(redis).catch(() => {})));
          await Promise.race([readingDone, delay(UNBLOCK_RETRY_MS)]);
        }
      };
      const finished = (async () => {
        await Promise.all([claimer.stop(), gauges?.stop(), unblockUntilRead()]);
        // Held messages that have not started stay pending: another consumer claims them once idle.
        if (fairness !== undefined && fairness.backlog > 0) {
          const left = queue.dropWaiting();
          if (left > 0) logger.info({ left }, "messages waiting their turn left pending for another consumer");
        }
        await queue.onIdle();
      })();
      let deadline: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        finished.then(() => true),
        new Promise<boolean>((resolve) => {
          deadline = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
      clearTimeout(deadline);
      if (!drained) {
        abandoned = true;
        handlerAbort.abort(new Error(`actor ${actor.name} stopped: drain timed out after ${timeoutMs} ms`));
      }
      await beat.stop();
      for (const reader of readers) reader.disconnect();
      const result = { drained, abandoned: drained ? 0 : active.size };
      logger.info(result, "actor stopped");
      return result;
    })();
    return stopping;
  };

  const metrics = async (): Promise<ActorMetrics> => ({
    actor: actor.name,
    group,
    consumer,
    inFlight: active.size,
    streams: await Promise.all(
      streams.map(async (stream): Promise<StreamMetrics> => {
        const stats = await streamStats(redis, stream, keys);
        return {
          stream,
          counters: counters.snapshot(stream),
          length: stats.length,
          deadLetters: stats.deadLetters,
          group: stats.groups.find((g) => g.group === group) ?? null,
        };
      }),
    ),
  });

  return { actor: actor.name, group, consumer, streams, stop, metrics };
}
