import { startActor, type ActorStarter } from "../index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { SHARDS } from "../../shared/platform/redis/keys.js";
import { defineActor, every } from "../runtime/index.js";
import { pruneApplied } from "./handler.js";
import { forgetStalePendingInstallations, usageBatchSchema, type UsageBatch } from "../../shared/verify/index.js";
import { createUsageWriter } from "./writer.js";

/**
 * How long usage messages are gathered in the stream before a read (the runner's
 * `readPauseMs`): a read, its one statement (handler.ts) and its XACK carry what arrived
 * meanwhile. The messages of one read reach the writer in one turn, so it sends them at once
 * (`gatherMs` 0): a gather there too only added its time to the lag without merging reads.
 * History in `npm run bench`: 100 ms against 20 ms took the usage actor's CPU per verify from
 * 2.0 to 1.0 µs and PostgreSQL's from 1.4 to 0.5 µs (docs/benchmarks.md, 2026-11-25); 200 ms
 * with no gather in the writer, against 100 ms read pause plus 100 ms gather, keeps the
 * longest lag (~200 ms) and doubles what a read carries (actors/usage: ~20% less CPU per
 * message for the actor, ~25% less for PostgreSQL, measured feeding the stream at 900/s).
 */
export const USAGE_GATHER_MS = 200;
const USAGE_GATHER_CONCURRENCY = 2_048;

const writer = createUsageWriter({ gatherMs: 0, maxMessages: USAGE_GATHER_CONCURRENCY });

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
  // One read (and one statement) carries at most this many: with the pause below, 10,000
  // messages (script runs) a second per actor process, about 300,000 verify/s at ~30 calls per run.
  concurrency: USAGE_GATHER_CONCURRENCY,
  // One message per counting-script run (~1,000-1,500 a second at full load on two cores):
  // read what 200 ms gathered at once, so a read, its statement and its XACK each carry
  // ~200-300 messages. Accounting in PostgreSQL lags by that much; counting itself is in Redis.
  readPauseMs: USAGE_GATHER_MS,
  // Its failures are PostgreSQL being away: retry often (at most 5 s apart, so accounting catches
  // up within seconds of its return) and for long (80 attempts, about 6.5 minutes) before a batch
  // goes to the dead letters.
  maxAttempts: 80,
  backoffMaxMs: 5_000,
  handler: async (batch, helpers) => {
    await writer.apply(helpers.db, { batch, stream: helpers.stream, messageId: helpers.messageId });
  },
});

/**
 * The accountant, plus a timer on the shared clock that prunes old "applied" markers and
 * forgets pending installations the owner did not decide on within 30 days of their first
 * call (shared/verify/stale-installations.ts). Any number of copies may prune at once.
 */
export const startUsage: ActorStarter = async (ctx) => {
  const running = await startActor(ctx, usageActor);
  const pruning = every(
    ctx.clock,
    10 * 60_000,
    async () => {
      const now = ctx.clock.now();
      const removed = await pruneApplied(ctx.db, now);
      if (removed > 0) ctx.logger.info({ removed }, "pruned usage markers");
      const forgotten = await forgetStalePendingInstallations(ctx.db, ctx.redis, ctx.keys, now);
      if (forgotten > 0) ctx.logger.info({ forgotten }, "forgot stale pending installations");
    },
    { onError: (error) => ctx.logger.error({ err: error }, "pruning usage markers or stale installations failed") },
  );
  return {
    async stop() {
      await pruning.stop();
      await running.stop();
    },
  };
};
