/**
 * `fairness` (define.ts, fair-queue.ts): one key's run of slow messages does not hold
 * every slot, a message of another key behind them in the stream is read and starts, and
 * freed slots go round the keys. On a real Redis; handlers block on gates, no timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, runActor } from "../../../actors/runtime/index.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { gate, pendingCount, testRedis, waitFor } from "./support.js";

const t = testRedis("fairness");
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

interface Owned {
  owner: string;
  n: number;
}
const ownedSchema = {
  type: "object",
  properties: { owner: { type: "string" }, n: { type: "integer" } },
  required: ["owner", "n"],
  additionalProperties: false,
};

const fast = { blockMs: 200, claimIdleMs: 5_000, claimIntervalMs: 1_000 };

/** An actor whose handler records each start and waits until the test opens that message's gate. */
function blockingActor(name: string, options: { concurrency: number; perKey: number; backlog: number }) {
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate<void>>>();
  const gateOf = (label: string) => {
    if (!gates.has(label)) gates.set(label, gate());
    return gates.get(label) as ReturnType<typeof gate<void>>;
  };
  const actor = defineActor<Owned>({
    ...fast,
    name,
    streams: name,
    schema: ownedSchema,
    concurrency: options.concurrency,
    fairness: { key: (m) => m.owner, perKey: options.perKey, backlog: options.backlog },
    handler: async (m) => {
      const label = `${m.owner}${m.n}`;
      started.push(label);
      await gateOf(label).promise;
    },
  });
  return { actor, started, open: (label: string) => gateOf(label).open() };
}

describe("fairness", () => {
  it("a message of another key starts while one key's messages fill the stream ahead of it", async () => {
    const { actor, started, open } = blockingActor("fair-a", { concurrency: 4, perKey: 2, backlog: 16 });
    handles.push(await runActor(actor, t.deps("c1")));
    const stream = t.keys.stream("fair-a");
    for (let n = 1; n <= 10; n++) await publish(t.redis, stream, { owner: "A", n });
    await publish(t.redis, stream, { owner: "B", n: 1 });
    await waitFor(() => started.includes("B1"), "B's message to start while A's are blocked");
    // A is held to its two slots even though two more are free.
    expect(started.filter((s) => s.startsWith("A"))).toEqual(["A1", "A2"]);
    for (let n = 1; n <= 10; n++) open(`A${n}`);
    open("B1");
    await waitFor(() => started.length === 11, "every message to start");
    await waitFor(async () => (await pendingCount(t.redis, stream, "fair-a")) === 0, "every ack");
  });

  it("freed slots go round the keys: the key served last waits its turn", async () => {
    const { actor, started, open } = blockingActor("fair-rr", { concurrency: 1, perKey: 1, backlog: 16 });
    const handle = await runActor(actor, t.deps("c1"));
    handles.push(handle);
    const stream = t.keys.stream("fair-rr");
    await publish(t.redis, stream, { owner: "A", n: 1 });
    await waitFor(() => started.includes("A1"), "A1 to start");
    for (const [owner, n] of [
      ["A", 2],
      ["A", 3],
      ["B", 1],
      ["C", 1],
      ["B", 2],
    ] as const)
      await publish(t.redis, stream, { owner, n });
    await waitFor(async () => (await handle.metrics()).inFlight === 6, "all six in hand");
    const order = ["A1", "B1", "C1", "A2", "B2", "A3"];
    for (let i = 0; i < order.length - 1; i++) {
      await waitFor(() => started.length > i, `${order[i]} to start`);
      open(started[i]);
    }
    await waitFor(() => started.length === order.length, "the last message to start");
    open(started.at(-1) as string);
    expect(started).toEqual(order);
  });

  it("at stop, held messages not started stay pending for another consumer", async () => {
    const { actor, started, open } = blockingActor("fair-stop", { concurrency: 1, perKey: 1, backlog: 8 });
    const handle = await runActor(actor, t.deps("c1"));
    const stream = t.keys.stream("fair-stop");
    for (let n = 1; n <= 4; n++) await publish(t.redis, stream, { owner: "A", n });
    await waitFor(async () => (await handle.metrics()).inFlight === 4, "all four in hand");
    expect(started).toEqual(["A1"]);
    const stopping = handle.stop({ timeoutMs: 5_000 });
    await waitFor(async () => (await handle.metrics()).inFlight === 1, "the three waiting to be let go");
    open("A1");
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    expect(started).toEqual(["A1"]);
    const pending = (await t.redis.xpending(stream, "fair-stop", "-", "+", 10)) as [string, string, number, number][];
    expect(pending.map(([, consumer]) => consumer)).toEqual(["c1", "c1", "c1"]);
  });

  it("is checked when defined", () => {
    const base = { name: "x", streams: "x", schema: ownedSchema, handler: async () => {}, concurrency: 2 };
    expect(() => defineActor<Owned>({ ...base, fairness: { key: (m) => m.owner, perKey: 3, backlog: 0 } })).toThrow(/perKey/);
    expect(() => defineActor<Owned>({ ...base, fairness: { key: (m) => m.owner, perKey: 1, backlog: -1 } })).toThrow(/backlog/);
  });
});
