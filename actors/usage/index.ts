import { startActor, type ActorStarter } from "../index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { SHARDS } from "../../shared/platform/redis/keys.js";
import { defineActor, every } from "../runtime/index.js";
import { pruneApplied } from "./handler.js";
import { usageBatchSchema, type UsageBatch } from "../../shared/verify/index.js";
import { createUsageWriter } from "./writer.js";

const writer = createUsageWriter();

/**
 * The usage accountant: one consumer group over the usage streams of every shard.
 * Any number of copies may run; each message is applied once (handler.ts). The messages in
 * hand are applied together, one transaction per batch of them (writer.ts): the higher the
 * concurrency, the more one read and one transaction can carry.
 */
export const usageActor = defineActor<UsageBatch, Pool>({
  name: "usage",
  streams: (keys) => Array.from({ length: SHARDS }, (_, shard) => keys.usageStream(shard)),
  schema: usageBatchSchema,
  concurrency: 256,
  // One message per counting-script run (~1,000 a second under load): read what 20 ms
  // gathered at once, so a read, its transaction and its XACK each carry ~20 messages.
  readPauseMs: 20,
  // Its failures are PostgreSQL being away: retry often (at most 5 s apart, so accounting catches
  // up within seconds of its return) and for long (80 attempts, about 6.5 minutes) before a batch
  // goes to the dead letters.
  maxAttempts: 80,
  backoffMaxMs: 5_000,
  handler: async (batch, helpers) => {
    await writer.apply(helpers.db, { batch, stream: helpers.stream, messageId: helpers.messageId });
  },
});

/** The accountant, plus a timer on the shared clock that prunes old "applied" markers. */
export const startUsage: ActorStarter = async (ctx) => {
  const running = await startActor(ctx, usageActor);
  const pruning = every(
    ctx.clock,
    10 * 60_000,
    async () => {
      const removed = await pruneApplied(ctx.db, ctx.clock.now());
      if (removed > 0) ctx.logger.info({ removed }, "pruned usage markers");
    },
    { onError: (error) => ctx.logger.error({ err: error }, "pruning usage markers failed") },
  );
  return {
    async stop() {
      await pruning.stop();
      await running.stop();
    },
  };
};
