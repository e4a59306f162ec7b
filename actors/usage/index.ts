import { startActor, type ActorStarter } from "../index.js";
import type { Pool } from "../../shared/db/pool.js";
import { USAGE_SHARDS } from "../../shared/redis/keys.js";
import { defineActor } from "../runtime/index.js";
import { applyUsage } from "./handler.js";
import { usageBatchSchema, type UsageBatch } from "./messages.js";

/**
 * The usage accountant: one consumer group over the usage streams of every shard.
 * Any number of copies may run; each message is applied once (handler.ts).
 */
export const usageActor = defineActor<UsageBatch, Pool>({
  name: "usage",
  streams: (keys) => Array.from({ length: USAGE_SHARDS }, (_, shard) => keys.usageStream(shard)),
  schema: usageBatchSchema,
  concurrency: 4,
  maxAttempts: 8,
  handler: async (batch, helpers) => {
    await applyUsage(batch, { db: helpers.db, stream: helpers.stream, messageId: helpers.messageId });
  },
});

export const startUsage: ActorStarter = (ctx) => startActor(ctx, usageActor);
