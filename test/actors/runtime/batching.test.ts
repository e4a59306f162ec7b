import { afterAll, describe, expect, it, vi } from "vitest";
import { createAcker } from "../../../actors/runtime/acks.js";
import { type ActorHandle, defineActor, runActor } from "../../../actors/runtime/index.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { type Job, jobSchema, pendingCount, testRedis, waitFor } from "./support.js";

/** How a busy stream costs fewer round trips: acks of one turn in one XACK, reads after a pause. */

const t = testRedis("batching");
const handles: ActorHandle[] = [];
afterAll(async () => {
  vi.restoreAllMocks();
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

/** The ids each XACK command carried, counted on the real client (Redis itself is not mocked). */
function watchAcks(): string[][] {
  const commands: string[][] = [];
  const original = t.redis.xack.bind(t.redis);
  vi.spyOn(t.redis, "xack").mockImplementation(((stream: string, group: string, ...ids: string[]) => {
    commands.push(ids);
    return original(stream, group, ...ids);
  }) as typeof t.redis.xack);
  return commands;
}

describe("acks", () => {
  it("acks of one turn leave as one XACK per stream, and each caller learns when it is durable", async () => {
    const stream = t.keys.stream("acks");
    await t.redis.xgroup("CREATE", stream, "g", "0", "MKSTREAM");
    for (let n = 0; n < 5; n++) await publish(t.redis, stream, { n });
    const reply = (await t.redis.xreadgroup("GROUP", "g", "c", "COUNT", 10, "STREAMS", stream, ">")) as [string, [string, string[]][]][];
    const ids = reply[0][1].map(([id]) => id);
    expect(await pendingCount(t.redis, stream, "g")).toBe(5);
    const commands = watchAcks();
    const ack = createAcker(t.redis, "g");
    await Promise.all(ids.map((id) => ack(stream, id)));
    expect(commands).toEqual([ids]);
    expect(await pendingCount(t.redis, stream, "g")).toBe(0);
    vi.restoreAllMocks();
  });

  it("an XACK that fails rejects every ack it carried", async () => {
    const broken = createAcker(t.redis, "no-such-group");
    // XACK on a key holding a string is a WRONGTYPE error.
    const key = t.keys.stream("not-a-stream");
    await t.redis.set(key, "x");
    await expect(Promise.all([broken(key, "1-0"), broken(key, "2-0")])).rejects.toThrow(/WRONGTYPE/);
  });
});

describe("readPauseMs", () => {
  it("messages that arrive during the pause after a read come in one read and leave in one XACK", async () => {
    const seen: number[] = [];
    const actor = defineActor<Job>({
      name: "paused",
      streams: "paused",
      schema: jobSchema,
      concurrency: 64,
      blockMs: 200,
      readPauseMs: 500,
      handler: async (message) => {
        seen.push(message.n);
      },
    });
    const stream = t.keys.stream("paused");
    const handle = await runActor(actor, t.deps("c1"));
    handles.push(handle);
    const commands = watchAcks();
    await publish(t.redis, stream, { n: 0 });
    await waitFor(() => seen.length === 1, "the first message");
    // The reader now pauses 500 ms: these ten wait for the next read, which brings them all.
    for (let n = 1; n <= 10; n++) await publish(t.redis, stream, { n });
    await waitFor(() => seen.length === 11, "the ten", { timeoutMs: 5_000 });
    await waitFor(async () => (await pendingCount(t.redis, stream, "paused")) === 0, "their acks");
    expect(commands.map((ids) => ids.length)).toEqual([1, 10]);
    vi.restoreAllMocks();
  });
});
