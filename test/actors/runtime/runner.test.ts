import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, PermanentError, RetryableError, runActor } from "../../../actors/runtime/index.js";
import { listDeadLetters } from "../../../shared/platform/streams/dead-letters.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { gate, type Job, jobSchema, pendingCount, testRedis, waitFor } from "./support.js";

const t = testRedis("runner");
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

const fast = { blockMs: 200, backoffBaseMs: 10, backoffMaxMs: 50, claimIdleMs: 2_000, claimIntervalMs: 500 };

async function start(actor: Parameters<typeof runActor<Job, undefined>>[0], consumer = "c1"): Promise<ActorHandle> {
  const handle = await runActor(actor, t.deps(consumer));
  handles.push(handle);
  return handle;
}

describe("runActor", () => {
  it("handles a message and acks it", async () => {
    const seen: { n: number; id: string; attempt: number }[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "ok",
      streams: "ok",
      schema: jobSchema,
      handler: async (message, helpers) => {
        seen.push({ n: message.n, id: helpers.messageId, attempt: helpers.attempt });
      },
    });
    const handle = await start(actor);
    const stream = t.keys.stream("ok");
    const id = await publish(t.redis, stream, { n: 7 });
    await waitFor(() => seen.length === 1, "the handler");
    await waitFor(async () => (await pendingCount(t.redis, stream, "ok")) === 0, "the ack");
    expect(seen).toEqual([{ n: 7, id, attempt: 1 }]);
    const metrics = await handle.metrics();
    expect(metrics.streams[0].counters.handled).toBe(1);
    expect(await handle.stop()).toEqual({ drained: true, abandoned: 0 });
  });

  it("moves invalid and undecodable messages to the dead-letter stream with the reason", async () => {
    let calls = 0;
    const actor = defineActor<Job>({
      ...fast,
      name: "strict",
      streams: "strict",
      schema: jobSchema,
      handler: async () => {
        calls += 1;
      },
    });
    await start(actor);
    const stream = t.keys.stream("strict");
    const invalid = await publish(t.redis, stream, { n: "seven" });
    const notJson = await t.redis.xadd(stream, "*", "data", "{nope");
    const noData = await t.redis.xadd(stream, "*", "payload", "{}");
    const letters = await waitFor(async () => {
      const list = await listDeadLetters(t.redis, t.keys, stream);
      return list.length === 3 && list;
    }, "three dead letters");
    expect(letters.map((l) => [l.id, l.reason])).toEqual([
      [invalid, "invalid"],
      [notJson, "undecodable"],
      [noData, "undecodable"],
    ]);
    expect(letters[0].error).toContain("must be integer");
    expect(letters[0].data).toBe('{"n":"seven"}');
    expect(letters[0].group).toBe("strict");
    expect(letters[2].error).toContain('missing field "data"');
    expect(await pendingCount(t.redis, stream, "strict")).toBe(0);
    expect(calls).toBe(0);
  });

  it("retries with backoff and dead-letters after maxAttempts tries", async () => {
    const attempts: number[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "flaky",
      streams: "flaky",
      schema: jobSchema,
      maxAttempts: 3,
      handler: async (_message, helpers) => {
        attempts.push(helpers.attempt);
        throw new RetryableError("upstream down");
      },
    });
    const handle = await start(actor);
    const stream = t.keys.stream("flaky");
    const id = await publish(t.redis, stream, { n: 1 });
    const [letter] = await waitFor(async () => {
      const list = await listDeadLetters(t.redis, t.keys, stream);
      return list.length === 1 && list;
    }, "the dead letter");
    expect(attempts).toEqual([1, 2, 3]);
    expect(letter).toMatchObject({ id, stream, reason: "exhausted", attempts: 3, data: '{"n":1}', consumer: "c1" });
    expect(letter.error).toContain("upstream down");
    expect(await pendingCount(t.redis, stream, "flaky")).toBe(0);
    const { counters } = (await handle.metrics()).streams[0];
    expect(counters).toMatchObject({ failed: 3, retried: 2, deadLettered: 1, handled: 0 });
  });

  it("sends a PermanentError to the dead letters at once", async () => {
    const attempts: number[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "refuser",
      streams: "refuser",
      schema: jobSchema,
      handler: async (_message, helpers) => {
        attempts.push(helpers.attempt);
        throw new PermanentError("domain does not exist");
      },
    });
    await start(actor);
    const stream = t.keys.stream("refuser");
    await publish(t.redis, stream, { n: 1 });
    const [letter] = await waitFor(async () => {
      const list = await listDeadLetters(t.redis, t.keys, stream);
      return list.length === 1 && list;
    }, "the dead letter");
    expect(attempts).toEqual([1]);
    expect(letter).toMatchObject({ reason: "permanent", attempts: 1, error: "PermanentError: domain does not exist" });
  });

  it("succeeds on the second attempt after an unknown (retryable) error", async () => {
    const attempts: number[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "second",
      streams: "second",
      schema: jobSchema,
      handler: async (_message, helpers) => {
        attempts.push(helpers.attempt);
        if (helpers.attempt === 1) throw new Error("connection reset");
      },
    });
    const handle = await start(actor);
    const stream = t.keys.stream("second");
    await publish(t.redis, stream, { n: 1 });
    await waitFor(async () => (await handle.metrics()).streams[0].counters.handled === 1, "the handled count");
    expect(attempts).toEqual([1, 2]);
    expect(await pendingCount(t.redis, stream, "second")).toBe(0);
    expect(await listDeadLetters(t.redis, t.keys, stream)).toEqual([]);
    expect((await handle.metrics()).streams[0].counters).toMatchObject({ failed: 1, retried: 1, deadLettered: 0 });
  });

  it("marks steps done with once(), so a retry does not repeat them", async () => {
    let sent = 0;
    const results: string[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "once",
      streams: "once",
      schema: jobSchema,
      handler: async (_message, helpers) => {
        const receipt = await helpers.once("email", async () => {
          sent += 1;
          return `receipt-${sent}`;
        });
        results.push(receipt);
        if (helpers.attempt === 1) throw new RetryableError("database down");
      },
    });
    const handle = await start(actor);
    await publish(t.redis, t.keys.stream("once"), { n: 1 });
    await waitFor(async () => (await handle.metrics()).streams[0].counters.handled === 1, "the handled count");
    expect(sent).toBe(1);
    expect(results).toEqual(["receipt-1", "receipt-1"]);
  });

  it("acks nothing before the handler's promise resolves", async () => {
    const release = gate();
    let started = false;
    const actor = defineActor<Job>({
      ...fast,
      name: "slow",
      streams: "slow",
      schema: jobSchema,
      handler: async () => {
        started = true;
        await release.promise;
      },
    });
    await start(actor);
    const stream = t.keys.stream("slow");
    await publish(t.redis, stream, { n: 1 });
    await waitFor(() => started, "the handler to start");
    expect(await pendingCount(t.redis, stream, "slow")).toBe(1);
    release.open();
    await waitFor(async () => (await pendingCount(t.redis, stream, "slow")) === 0, "the ack");
  });

  it("drains on stop: waits for the in-flight handler, acks it, reads nothing more", async () => {
    const release = gate();
    let started = false;
    let finished = false;
    const actor = defineActor<Job>({
      ...fast,
      // A long block: stop() must not wait it out (CLIENT UNBLOCK ends it).
      blockMs: 10_000,
      name: "drain",
      streams: "drain",
      schema: jobSchema,
      handler: async () => {
        started = true;
        await release.promise;
        finished = true;
      },
    });
    const handle = await start(actor);
    const stream = t.keys.stream("drain");
    await publish(t.redis, stream, { n: 1 });
    await waitFor(() => started, "the handler to start");
    const stopAt = Date.now();
    const stopping = handle.stop({ timeoutMs: 10_000 });
    let stopped = false;
    void stopping.then(() => {
      stopped = true;
    });
    expect(await pendingCount(t.redis, stream, "drain")).toBe(1);
    expect(stopped).toBe(false);
    release.open();
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    expect(Date.now() - stopAt).toBeLessThan(5_000);
    expect(finished).toBe(true);
    expect(await pendingCount(t.redis, stream, "drain")).toBe(0);
    // The reader is gone: a new message stays undelivered.
    await publish(t.redis, stream, { n: 2 });
    const [info] = (await t.redis.xinfo("GROUPS", stream)) as unknown[][];
    expect(info[info.indexOf("lag") + 1]).toBe(1);
    expect(info[info.indexOf("pending") + 1]).toBe(0);
  });
});

describe("runActor, resilience and limits", () => {
  it("never holds more messages than its concurrency", async () => {
    const release = gate();
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const actor = defineActor<Job>({
      ...fast,
      name: "bounded",
      streams: "bounded",
      schema: jobSchema,
      concurrency: 2,
      handler: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await release.promise;
        running -= 1;
        done += 1;
      },
    });
    await start(actor);
    const stream = t.keys.stream("bounded");
    for (const n of [1, 2, 3, 4, 5]) await publish(t.redis, stream, { n });
    await waitFor(() => running === 2, "two handlers running");
    // Only two entries were read: the other three are still undelivered, free for other consumers.
    expect(await pendingCount(t.redis, stream, "bounded")).toBe(2);
    release.open();
    await waitFor(() => done === 5, "all five");
    expect(maxRunning).toBe(2);
  });

  it("reads several streams and tells the handler which one", async () => {
    const seen: string[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "multi",
      streams: ["multi-a", "multi-b"],
      schema: jobSchema,
      handler: async (message, helpers) => {
        seen.push(`${helpers.stream}#${message.n}`);
      },
    });
    await start(actor);
    await publish(t.redis, t.keys.stream("multi-a"), { n: 1 });
    await publish(t.redis, t.keys.stream("multi-b"), { n: 2 });
    await waitFor(() => seen.length === 2, "both streams");
    expect(seen.sort()).toEqual([`${t.keys.stream("multi-a")}#1`, `${t.keys.stream("multi-b")}#2`]);
  });

  it("re-creates its group when Redis lost the stream", async () => {
    const seen: number[] = [];
    const actor = defineActor<Job>({
      ...fast,
      name: "phoenix",
      streams: "phoenix",
      schema: jobSchema,
      errorDelayMs: 20,
      handler: async (message) => {
        seen.push(message.n);
      },
    });
    await start(actor);
    const stream = t.keys.stream("phoenix");
    await publish(t.redis, stream, { n: 1 });
    await waitFor(() => seen.length === 1, "the first message");
    await t.redis.del(stream);
    await waitFor(async () => {
      const groups = (await t.redis.xinfo("GROUPS", stream).catch(() => [])) as unknown[];
      return groups.length === 1;
    }, "the group to come back");
    await publish(t.redis, stream, { n: 2 });
    await waitFor(() => seen.length === 2, "the message after the loss");
    expect(seen).toEqual([1, 2]);
  });
});
