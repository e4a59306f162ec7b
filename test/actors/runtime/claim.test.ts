import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, runActor } from "../../../actors/runtime/index.js";
import { listDeadLetters } from "../../../shared/platform/streams/dead-letters.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { gate, type Job, jobSchema, pendingCount, testRedis, waitFor } from "./support.js";

const t = testRedis("claim");
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

const fast = { blockMs: 200, backoffBaseMs: 10, claimIdleMs: 300, claimIntervalMs: 50 };

interface Seen {
  consumer: string;
  attempt: number;
}

function recorder(name: string, seen: Seen[], options: { hang?: boolean; aborted?: string[] } = {}) {
  return defineActor<Job>({
    ...fast,
    name,
    group: "workers",
    streams: name.split("-")[0],
    schema: jobSchema,
    handler: async (_message, helpers) => {
      seen.push({ consumer: helpers.consumer, attempt: helpers.attempt });
      if (options.hang) {
        helpers.signal.addEventListener("abort", () => options.aborted?.push(helpers.consumer));
        await new Promise(() => {});
      }
    },
  });
}

async function start(name: string, seen: Seen[], consumer: string, options: { hang?: boolean; aborted?: string[] } = {}) {
  const handle = await runActor(recorder(name, seen, options), t.deps(consumer));
  handles.push(handle);
  return handle;
}

describe("claiming the work of dead consumers", () => {
  it("hands a message abandoned by a stopped consumer to another one (XAUTOCLAIM)", async () => {
    const seen: Seen[] = [];
    const aborted: string[] = [];
    const dying = await start("abandon-a", seen, "dying", { hang: true, aborted });
    const stream = t.keys.stream("abandon");
    await publish(t.redis, stream, { n: 1 });
    await waitFor(() => seen.length === 1, "the first delivery");
    // The handler never resolves: the drain times out, the entry is left pending.
    expect(await dying.stop({ timeoutMs: 50 })).toEqual({ drained: false, abandoned: 1 });
    expect(aborted).toEqual(["dying"]);
    expect(await pendingCount(t.redis, stream, "workers")).toBe(1);

    const heir = await start("abandon-b", seen, "heir");
    await waitFor(async () => (await pendingCount(t.redis, stream, "workers")) === 0, "the claim and ack");
    expect(seen).toEqual([
      { consumer: "dying", attempt: 1 },
      { consumer: "heir", attempt: 2 },
    ]);
    expect((await heir.metrics()).streams[0].counters).toMatchObject({ claimed: 1, handled: 1 });
  });

  it("claims an entry a crashed process read but never acked", async () => {
    const seen: Seen[] = [];
    const stream = t.keys.stream("ghost");
    await t.redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
    await publish(t.redis, stream, { n: 1 });
    // A consumer that read the entry and died: nothing of it runs any more.
    await t.redis.xreadgroup("GROUP", "workers", "ghost", "COUNT", 1, "STREAMS", stream, ">");
    await start("ghost-a", seen, "alive");
    await waitFor(async () => (await pendingCount(t.redis, stream, "workers")) === 0, "the claim and ack");
    expect(seen).toEqual([{ consumer: "alive", attempt: 2 }]);
  });

  it("keeps a long handler's entry with its consumer (heartbeat), even past claimIdleMs", async () => {
    const seen: Seen[] = [];
    const release = gate();
    const stream = t.keys.stream("long");
    const slow = defineActor<Job>({
      ...fast,
      name: "long-a",
      group: "workers",
      streams: "long",
      schema: jobSchema,
      handler: async (_message, helpers) => {
        seen.push({ consumer: helpers.consumer, attempt: helpers.attempt });
        await release.promise;
      },
    });
    const holder = await runActor(slow, t.deps("holder"));
    handles.push(holder);
    const watcher = await start("long-b", seen, "watcher");
    const id = await publish(t.redis, stream, { n: 1 });
    await waitFor(() => seen.length === 1, "the first delivery");
    // Wait until the entry has existed for several claimIdleMs (Redis time), so the
    // watcher's claim loop had many chances to take it were it not kept fresh.
    await waitFor(
      async () => {
        const [seconds, micros] = await t.redis.time();
        return Number(seconds) * 1000 + Number(micros) / 1000 - Number(id.split("-")[0]) > 4 * fast.claimIdleMs;
      },
      "time to pass",
      { intervalMs: 50 },
    );
    const [entry] = (await t.redis.xpending(stream, "workers", "-", "+", 1)) as [string, string, number, number][];
    expect(entry[1]).toBe("holder");
    expect(entry[2]).toBeLessThan(fast.claimIdleMs);
    expect(entry[3]).toBe(1);
    expect((await watcher.metrics()).streams[0].counters.claimed).toBe(0);
    release.open();
    await waitFor(async () => (await pendingCount(t.redis, stream, "workers")) === 0, "the ack");
    expect(seen).toEqual([{ consumer: "holder", attempt: 1 }]);
  });

  it("dead-letters a message whose every delivery died with its consumer", async () => {
    const seen: Seen[] = [];
    const stream = t.keys.stream("poison");
    await t.redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
    const id = await publish(t.redis, stream, { n: 1 });
    // Two deliveries that crashed: a read, then a claim by another doomed consumer.
    await t.redis.xreadgroup("GROUP", "workers", "crash-1", "COUNT", 1, "STREAMS", stream, ">");
    await t.redis.call("XCLAIM", stream, "workers", "crash-2", 0, id);
    const poison = defineActor<Job>({
      ...fast,
      name: "poison",
      group: "workers",
      streams: "poison",
      schema: jobSchema,
      maxAttempts: 2,
      handler: async (_message, helpers) => {
        seen.push({ consumer: helpers.consumer, attempt: helpers.attempt });
      },
    });
    handles.push(await runActor(poison, t.deps("survivor")));
    const [letter] = await waitFor(async () => {
      const list = await listDeadLetters(t.redis, t.keys, stream);
      return list.length === 1 && list;
    }, "the dead letter");
    expect(letter).toMatchObject({ id, reason: "exhausted", attempts: 2 });
    expect(seen).toEqual([]);
    expect(await pendingCount(t.redis, stream, "workers")).toBe(0);
  });
});
