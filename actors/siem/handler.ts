import type { Redis } from "../../shared/platform/redis/client.js";
import type { Clock } from "../../shared/platform/clock.js";
import type { Logger } from "../../shared/platform/log.js";
import {
  destinationById,
  findDestination,
  recordDelivered,
  recordFailure,
  type SyslogEvent,
  type DestinationMessage,
  type SiemTestReply,
  type SiemTestRequest,
  type SiemDestinationRow,
  appendToDestinations,
  siemTestDone,
} from "../../shared/events/index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { describeError, type Handler, RetryableError } from "../runtime/index.js";
import { createBatcher } from "./batcher.js";
import type { LoadedDestination } from "./messages.js";
import { jitteredBackoff, type RetryPolicy } from "./retry.js";
import { DeliveryError, type PushNetwork } from "./transport/guard.js";
import { sendBatch } from "./transport/index.js";

export interface DeliveryDeps {
  db: Pool;
  clock: Clock;
  network: PushNetwork;
  retry: RetryPolicy;
  random: () => number;
  batchSize: number;
  lingerMs: number;
  /** The transport; tests may wrap it. */
  send?: typeof sendBatch;
}

interface Item {
  event: SyslogEvent;
  attempt: number;
  /** The stream entry, and where its read was recorded (the stream's `inhand` hash: replay.ts). */
  messageId: string;
  inHand: string;
  redis: Redis;
  logger: Logger;
}

/**
 * The organization reads a failure's message (`last_error`, the test event's reply); what a
 * DeliveryError keeps from it (a collector's words from inside the service's network, why the
 * guard refused a name) is logged here.
 */
function logWithheld(logger: Logger, destinationId: number, error: unknown): void {
  if (error instanceof DeliveryError && error.logDetail !== undefined) {
    logger.warn({ destination: destinationId, error: error.message, detail: error.logDetail }, "SIEM push failed");
  }
}

/** The entries leave the `inhand` hash: delivered, or dead-lettered by the runtime (which keeps their data). */
async function handedOver(items: readonly Item[]): Promise<void> {
  if (items.length === 0) return;
  await items[0].redis.hdel(items[0].inHand, ...items.map((i) => i.messageId));
}

/**
 * The handler of one destination's delivery loop. Items are batched; a batch is sent
 * with each event once (a relay repeat of the same id rides along for free), then its
 * outcome recorded: delivered count, highest id and time on success; on failure the
 * error, and the events that used their last attempt as `failed` (the runtime moves
 * those to the dead letters when the handler throws). Every waiter of a failed batch
 * retries after the same jittered delay, computed from the batch's highest attempt, so
 * the batch re-forms instead of trickling back one by one.
 */
export function deliveryHandler(destination: LoadedDestination, deps: DeliveryDeps): Handler<DestinationMessage, Pool> {
  const send = deps.send ?? sendBatch;
  const batcher = createBatcher<Item>({
    size: deps.batchSize,
    lingerMs: deps.lingerMs,
    async send(items) {
      const byId = new Map<number, SyslogEvent>();
      for (const item of items) byId.set(item.event.id, item.event);
      const events = [...byId.values()].sort((a, b) => a.id - b.id);
      try {
        await send(destination, events, deps.network);
      } catch (error) {
        const attempt = Math.max(...items.map((i) => i.attempt));
        const last = items.filter((i) => i.attempt >= deps.retry.maxAttempts);
        const exhausted = new Set(last.map((i) => i.event.id)).size;
        const description = describeError(error);
        logWithheld(items[0].logger, destination.id, error);
        await recordFailure(deps.db, destination.id, description, exhausted, deps.clock.now()).catch(() => {});
        await handedOver(last).catch(() => {});
        throw new RetryableError(description, jitteredBackoff(deps.retry, attempt, deps.random));
      }
      await recordDelivered(deps.db, destination.id, events.length, events[events.length - 1].id, deps.clock.now());
      // Left in the hash if this fails: a later start finds the entry acked or still on the stream.
      await handedOver(items).catch(() => {});
    },
  });
  return (message, helpers) =>
    batcher.submit({
      event: message.event,
      attempt: helpers.attempt,
      messageId: helpers.messageId,
      inHand: helpers.keys.streamSide(helpers.stream, "inhand"),
      redis: helpers.redis,
      logger: helpers.logger,
    });
}

/** The destinations of each organization, as the fan-out sees them. */
export interface FanoutTargets {
  destinationsOf(orgId: number): Promise<readonly number[]>;
}

/**
 * The fan-out: one event of the `events` stream becomes one entry on the stream of each
 * destination of its organization. It only appends to Redis, so a slow or dead
 * destination never holds it up; the ack comes after the appends, so a crash in between
 * copies the event again (delivery loops absorb repeats: the id is fixed).
 */
export function fanoutHandler(targets: FanoutTargets, maxLen: number): Handler<DestinationMessage, Pool> {
  return async (message, { redis, keys }) => {
    const ids = await targets.destinationsOf(message.org_id);
    if (ids.length === 0) return;
    await appendToDestinations(redis, keys, ids, message.event.id, JSON.stringify(message), maxLen);
  };
}

/** The synthetic event "send test event" delivers: id 0, a type of its own, never stored. */
export function testEvent(nowMs: number, orgId: number): SyslogEvent {
  return {
    id: 0,
    type: "siem.test",
    time: new Date(nowMs).toISOString(),
    domain: "",
    org_id: orgId,
    message: "Test event from the access gateway: this destination is reachable.",
  };
}

/**
 * "Send test event": one synthetic event straight to the destination, the outcome as the
 * reply. The destination is looked up within the request's organization, the one its turn
 * was taken for; a request without one (published before `org_id` was added) by id alone.
 * Handled, the request no longer counts among its organization's outstanding ones (the
 * admin route's cap), before the reply, so a caller answered may send the next at once.
 */
export function testHandler(
  load: (row: SiemDestinationRow) => LoadedDestination,
  deps: Pick<DeliveryDeps, "network" | "clock" | "send">,
): Handler<SiemTestRequest, Pool> {
  const send = deps.send ?? sendBatch;
  return async (request, { db, reply, redis, keys, logger }) => {
    let answer: SiemTestReply;
    try {
      const row =
        request.org_id === undefined
          ? await destinationById(db, request.destination_id)
          : await findDestination(db, request.org_id, request.destination_id);
      if (row === null) answer = { ok: false, error: "no such destination" };
      else {
        try {
          await send(load(row), [testEvent(deps.clock.now(), row.org_id)], deps.network);
          answer = { ok: true, event_id: 0 };
        } catch (error) {
          logWithheld(logger, row.id, error);
          answer = { ok: false, error: describeError(error) };
        }
      }
    } finally {
      if (request.org_id !== undefined) await siemTestDone(redis, keys, request.org_id);
    }
    await reply?.(answer);
  };
}
