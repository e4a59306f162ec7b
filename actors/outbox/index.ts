import { registerStream } from "../../shared/platform/streams/registry.js";
import type { PoolClient } from "pg";
import type { Context } from "../../shared/platform/context.js";
import {
  claimOutbox,
  deleteOutbox,
  eventView,
  listenOutbox,
  unlistenOutbox,
  EVENTS_STREAM,
  EVENTS_STREAM_MAX_LEN,
  type EventMessage,
} from "../../shared/events/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { encodeFields } from "../../shared/platform/streams/envelope.js";
import { coalesce } from "../runtime/coalesce.js";
import { every } from "../runtime/every.js";
import type { RunningActor } from "../index.js";

/** Events moved per transaction. */
export const RELAY_BATCH = 500;
/** Poll interval when no NOTIFY arrives (a lost LISTEN connection, a notification dropped). */
export const RELAY_POLL_MS = 1_000;

/**
 * The outbox relay: moves committed events from `event_outbox` to the `events` stream.
 * Each batch is claimed with FOR UPDATE SKIP LOCKED, published, then deleted in the same
 * transaction, so relays can run side by side without publishing the same batch twice.
 * A crash after XADD and before COMMIT publishes that batch again on the next run (at least
 * once; consumers de-duplicate by event id). NOTIFY, sent by insertEvent and delivered at
 * commit, wakes the relay at once; the poll covers a lost listener.
 */
export async function relayOnce(ctx: Pick<Context, "db" | "redis" | "keys">, batch = RELAY_BATCH): Promise<number> {
  const stream = ctx.keys.stream(EVENTS_STREAM);
  let moved = 0;
  for (;;) {
    const count = await transaction(ctx.db, async (tx) => {
      const rows = await claimOutbox(tx, batch);
      if (rows.length === 0) return 0;
      const pipeline = ctx.redis.pipeline();
      for (const row of rows) {
        const message: EventMessage = { org_id: row.org_id, event: eventView(row) };
        pipeline.xadd(stream, "MAXLEN", "~", EVENTS_STREAM_MAX_LEN, "*", ...encodeFields(JSON.stringify(message)));
      }
      // Registered beside the pipeline, not in it: on a Redis Cluster the set may sit on another node.
      const [results] = await Promise.all([pipeline.exec(), registerStream(ctx.redis, ctx.keys, stream)]);
      const failed = results?.find(([error]) => error !== null);
      if (!results || failed) throw failed?.[0] ?? new Error("XADD pipeline returned nothing");
      await deleteOutbox(
        tx,
        rows.map((r) => r.id),
      );
      return rows.length;
    });
    moved += count;
    if (count < batch) return moved;
  }
}

export async function startOutboxRelay(ctx: Context): Promise<RunningActor> {
  let listener: PoolClient | null = null;
  let stopped = false;
  // Runs never overlap: a burst of notifications while a run is going costs one more run.
  const relay = coalesce(
    () => relayOnce(ctx),
    () => stopped,
  );
  const kick = relay.run;
  const timer = every(ctx.clock, RELAY_POLL_MS, kick, {
    onError: (error) => ctx.logger.warn({ err: error }, "outbox relay run failed; retrying"),
  });
  // The LISTEN connection, and how to give it back exactly once (an error after stop() or a
  // second error must not release it again: pg-pool throws on a double release).
  let release: ((destroy: boolean) => void) | null = null;
  const listen = async () => {
    try {
      const held = await ctx.db.connect();
      let released = false;
      const onError = () => {
        giveBack(true);
        if (!stopped) setTimeout(() => void listen(), RELAY_POLL_MS).unref();
      };
      const giveBack = (destroy: boolean) => {
        if (released) return;
        released = true;
        held.off("error", onError);
        held.removeAllListeners("notification");
        if (listener === held) listener = null;
        if (release === giveBack) release = null;
        held.release(destroy);
      };
      held.on("notification", () => void kick().catch((error: unknown) => ctx.logger.warn({ err: error }, "outbox relay failed")));
      held.on("error", onError);
      release = giveBack;
      await listenOutbox(held);
      listener = held;
    } catch (error) {
      release?.(true);
      ctx.logger.warn({ err: error }, "outbox relay cannot LISTEN; polling only");
      if (!stopped) setTimeout(() => void listen(), RELAY_POLL_MS).unref();
    }
  };
  await listen();
  return {
    async stop() {
      stopped = true;
      await timer.stop();
      await relay.current();
      if (listener) await unlistenOutbox(listener).catch(() => {});
      release?.(false);
    },
  };
}
