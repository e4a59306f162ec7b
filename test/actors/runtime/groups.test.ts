import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, PermanentError, runActor } from "../../../actors/runtime/index.js";
import { listDeadLetters, moveToDeadLetters, retryDeadLetters } from "../../../shared/platform/streams/dead-letters.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { gate, type Job, jobSchema, pendingCount, testRedis, waitFor } from "./support.js";

const t = testRedis("groups");
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

const fast = { blockMs: 200, backoffBaseMs: 10, claimIdleMs: 2_000, claimIntervalMs: 500 };

function collector(name: string, group: string, stream: string, into: number[]) {
  return defineActor<Job>({
    ...fast,
    name,
    group,
    streams: stream,
    schema: jobSchema,
    handler: async (message) => {
      into.push(message.n);
    },
  });
}

async function start(actor: Parameters<typeof runActor<Job, undefined>>[0], consumer: string): Promise<ActorHandle> {
  const handle = await runActor(actor, t.deps(consumer));
  handles.push(handle);
  return handle;
}

describe("groups and consumers", () => {
  it("delivers every message to each group on a stream", async () => {
    const audit: number[] = [];
    const billing: number[] = [];
    await start(collector("audit", "audit", "events", audit), "c1");
    await start(collector("billing", "billing", "events", billing), "c1");
    const stream = t.keys.stream("events");
    for (const n of [1, 2, 3]) await publish(t.redis, stream, { n });
    await waitFor(() => audit.length === 3 && billing.length === 3, "both groups");
    expect(audit).toEqual([1, 2, 3]);
    expect(billing).toEqual([1, 2, 3]);
  });

  it("shares a group's work between its consumers", async () => {
    const byConsumer = new Map<string, number[]>();
    const bothBusy = gate();
    const actor = defineActor<Job>({
      ...fast,
      name: "shared",
      streams: "shared",
      schema: jobSchema,
      concurrency: 1,
      handler: async (message, helpers) => {
        byConsumer.set(helpers.consumer, [...(byConsumer.get(helpers.consumer) ?? []), message.n]);
        if (byConsumer.size === 2) bothBusy.open();
        // Each consumer holds its first message until the other one has one too.
        await bothBusy.promise;
      },
    });
    await start(actor, "w1");
    await start(actor, "w2");
    const stream = t.keys.stream("shared");
    for (const n of [1, 2, 3, 4]) await publish(t.redis, stream, { n });
    await waitFor(
      async () => (await pendingCount(t.redis, stream, "shared")) === 0 && [...byConsumer.values()].flat().length === 4,
      "all four",
    );
    expect([...byConsumer.keys()].sort()).toEqual(["w1", "w2"]);
    expect([...byConsumer.values()].flat().sort()).toEqual([1, 2, 3, 4]);
  });

  it("retries a dead letter into its own group only", async () => {
    const ledger: number[] = [];
    const mailer: number[] = [];
    let mailerUp = false;
    const ledgerHandle = await start(collector("ledger", "ledger", "orders", ledger), "c1");
    const mailerActor = defineActor<Job>({
      ...fast,
      name: "mailer",
      streams: "orders",
      schema: jobSchema,
      handler: async (message) => {
        if (!mailerUp) throw new PermanentError("template missing");
        mailer.push(message.n);
      },
    });
    await start(mailerActor, "c1");
    const stream = t.keys.stream("orders");
    await publish(t.redis, stream, { n: 42 });
    const [letter] = await waitFor(async () => {
      const list = await listDeadLetters(t.redis, t.keys, stream);
      return list.length === 1 && list;
    }, "the mailer's dead letter");
    expect(letter).toMatchObject({ group: "mailer", reason: "permanent" });
    await waitFor(() => ledger.length === 1, "the ledger");

    mailerUp = true;
    const [retried] = await retryDeadLetters(t.redis, t.keys, stream, [letter.deadId]);
    expect(retried.deadId).toBe(letter.deadId);
    await waitFor(() => mailer.length === 1, "the retried message");
    await waitFor(async () => (await ledgerHandle.metrics()).streams[0].counters.skipped === 1, "the ledger to skip it");
    expect(mailer).toEqual([42]);
    expect(ledger).toEqual([42]);
    expect(await listDeadLetters(t.redis, t.keys, stream)).toEqual([]);
    expect(await retryDeadLetters(t.redis, t.keys, stream, [letter.deadId])).toEqual([]);
  });

  it("a retried dead letter does not trim a stream longer than the default cap (100,000)", async () => {
    // The usage streams keep 200,000 entries, the events streams 1,000,000: a retry must not cut them down.
    const stream = t.keys.stream("long");
    for (let i = 0; i < 150_000; i += 10_000) {
      const pipeline = t.redis.pipeline();
      for (let j = 0; j < 10_000; j++) pipeline.xadd(stream, "*", "data", "{}");
      await pipeline.exec();
    }
    await moveToDeadLetters(
      t.redis,
      t.keys,
      { stream, id: "1-1", group: "g", consumer: "c", reason: "exhausted", error: "down", attempts: 3, data: "{}", at: 0 },
      1000,
    );
    const [letter] = await listDeadLetters(t.redis, t.keys, stream);
    expect(await retryDeadLetters(t.redis, t.keys, stream, [letter.deadId])).toHaveLength(1);
    expect(await t.redis.xlen(stream)).toBe(150_001);
    await t.redis.del(stream);
  });
});
