/**
 * The life of one message in a consumer's hands: decode, validate, run the handler,
 * ack; or retry with backoff; or move it to the dead-letter stream. The ack comes only
 * after the handler's promise resolved, i.e. after its effect is durable: a crash at any
 * earlier point leaves the entry pending, and XAUTOCLAIM hands it to another consumer.
 *
 * Attempts are the pending entry's delivery count, not a local counter: XREADGROUP
 * delivers with count 1, each retry re-claims the entry with XCLAIM (which increments
 * it) and XAUTOCLAIM increments it when another consumer takes over. So attempts add up
 * across consumers and crashes, and a message that kills its consumer every time still
 * reaches the dead-letter stream after maxAttempts deliveries.
 */
import type { Ajv, ValidateFunction } from "ajv";
import type { Redis } from "../../shared/platform/redis/client.js";
import type { Clock } from "../../shared/platform/clock.js";
import type { Logger } from "../../shared/platform/log.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { type DeadReason, moveToDeadLetters } from "../../shared/platform/streams/dead-letters.js";
import type { Ack } from "./acks.js";
import { type Actor, backoffMs, type Helpers } from "./define.js";
import { describeError, isRetryable, retryAfter } from "./errors.js";
import { decodeFields, type Envelope } from "../../shared/platform/streams/envelope.js";
import type { RunnerCounters } from "./metrics.js";
import { parsePendingEntries } from "../../shared/platform/streams/redis-replies.js";
import { sendReply } from "../../shared/platform/streams/request-reply.js";

export interface Delivery {
  stream: string;
  id: string;
  /** Null when the entry was deleted (trimmed) while pending. */
  fields: string[] | null;
  /** Times delivered so far, this delivery included. */
  deliveries: number;
}

/** handled/dead/skipped are acked; abandoned stays pending for another consumer; gone was no longer pending. */
export type Outcome = "handled" | "dead" | "skipped" | "abandoned" | "gone";

export interface ProcessorContext<T, Db> {
  actor: Actor<T, Db>;
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  db: Db;
  consumer: string;
  ajv: Ajv;
  validate: ValidateFunction<T>;
  counters: RunnerCounters;
  /** Aborted when a drain timed out; handlers see it as helpers.signal. */
  signal: AbortSignal;
  /** stop() was called: no more waiting out backoffs. */
  stopping(): boolean;
  /** The drain timed out: outcomes are no longer acted on, the entry stays pending. */
  abandoned(): boolean;
  /** Resolves true after ms, false at once if stop() interrupts it. */
  sleep(ms: number): Promise<boolean>;
  /** XACK, batched per stream and turn (acks.ts). */
  ack: Ack;
}

export function createProcessor<T, Db>(ctx: ProcessorContext<T, Db>): (delivery: Delivery) => Promise<Outcome> {
  const { actor, redis, keys, consumer } = ctx;
  const group = actor.group;

  async function deadLetter(d: Delivery, data: string, reason: DeadReason, error: string, attempts: number): Promise<Outcome> {
    if (ctx.abandoned()) return "abandoned";
    const at = ctx.clock.now();
    await moveToDeadLetters(
      redis,
      keys,
      { stream: d.stream, id: d.id, group, consumer, reason, error, attempts, data, at },
      actor.deadLetterMaxLen,
    );
    ctx.counters.inc(d.stream, "deadLettered");
    ctx.logger.warn({ stream: d.stream, messageId: d.id, reason, error, attempts }, "message moved to dead letters");
    return "dead";
  }

  const ack = (d: Delivery): Promise<void> => ctx.ack(d.stream, d.id);

  /**
   * Take the entry back for the next attempt. XCLAIM without JUSTID increments the
   * delivery count (that is the point); XPENDING in the same MULTI reads it back.
   * Null when the entry is no longer pending (acked by a consumer that claimed it
   * meanwhile, or trimmed).
   */
  async function redeliver(d: Delivery): Promise<number | null> {
    const results = await redis.multi().xclaim(d.stream, group, consumer, 0, d.id).xpending(d.stream, group, d.id, d.id, 1).exec();
    if (results === null) throw new Error("MULTI for a retry was discarded");
    for (const [error] of results) if (error !== null) throw error;
    const [entry] = parsePendingEntries(results[1][1]);
    return entry === undefined ? null : entry.deliveries;
  }

  function helpersFor(d: Delivery, envelope: Envelope, attempt: number): Helpers<Db> {
    const replyTo = envelope.replyTo;
    return {
      messageId: d.id,
      stream: d.stream,
      group,
      consumer,
      attempt,
      maxAttempts: actor.maxAttempts,
      redis,
      keys,
      clock: ctx.clock,
      logger: ctx.logger.child({ stream: d.stream, messageId: d.id, attempt }),
      signal: ctx.signal,
      db: ctx.db,
      reply: replyTo === null ? undefined : (payload) => sendReply(redis, keys, replyTo, payload, actor.replyTtlSeconds),
      once: async <R>(step: string, fn: () => Promise<R>): Promise<R> => {
        // Stream in the marker: ids are unique per stream only, and an actor may read several.
        const key = keys.handled(group, `${d.stream}/${d.id}/${step}`);
        const prior = await redis.get(key);
        if (prior !== null) return JSON.parse(prior) as R;
        const result = await fn();
        await redis.set(key, JSON.stringify(result) ?? "null", "PX", actor.handledTtlMs);
        return result;
      },
    };
  }

  return async function processMessage(d: Delivery): Promise<Outcome> {
    if (d.fields === null) {
      // Trimmed away while pending (Redis 6.2 reports these): nothing left to handle.
      await ack(d);
      return "gone";
    }
    const decoded = decodeFields(d.fields);
    if (!decoded.ok) return deadLetter(d, decoded.raw, "undecodable", decoded.reason, d.deliveries);
    const { envelope } = decoded;
    if (envelope.group !== null && envelope.group !== group) {
      await ack(d);
      ctx.counters.inc(d.stream, "skipped");
      return "skipped";
    }
    const payload = envelope.payload;
    if (!ctx.validate(payload)) {
      return deadLetter(d, envelope.raw, "invalid", ctx.ajv.errorsText(ctx.validate.errors), d.deliveries);
    }

    let attempt = d.deliveries;
    for (;;) {
      if (attempt > actor.maxAttempts) {
        // Only reachable through claims: earlier deliveries died with their consumer.
        const error = `no attempt completed in ${attempt - 1} deliveries (consumer crashed or stalled)`;
        return deadLetter(d, envelope.raw, "exhausted", error, attempt - 1);
      }
      try {
        await actor.handler(payload, helpersFor(d, envelope, attempt));
      } catch (error) {
        ctx.counters.inc(d.stream, "failed");
        if (ctx.abandoned()) return "abandoned";
        const description = describeError(error);
        if (!isRetryable(error)) return deadLetter(d, envelope.raw, "permanent", description, attempt);
        if (attempt >= actor.maxAttempts) return deadLetter(d, envelope.raw, "exhausted", description, attempt);
        ctx.logger.warn({ stream: d.stream, messageId: d.id, attempt, error: description }, "handler failed, will retry");
        // Stopping: leave it pending rather than hold up the drain; another consumer
        // claims it once idle, and that claim counts as the next attempt.
        if (ctx.stopping()) return "abandoned";
        if (!(await ctx.sleep(retryAfter(error) ?? backoffMs(actor, attempt)))) return "abandoned";
        const next = await redeliver(d);
        if (next === null) return "gone";
        ctx.counters.inc(d.stream, "retried");
        attempt = next;
        continue;
      }
      if (ctx.abandoned()) return "abandoned";
      await ack(d);
      ctx.counters.inc(d.stream, "handled");
      return "handled";
    }
  };
}
