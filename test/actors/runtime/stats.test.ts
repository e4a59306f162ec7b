import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, runActor } from "../../../actors/runtime/index.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { streamStats } from "../../../shared/platform/streams/stats.js";
import { type Job, jobSchema, testRedis, waitFor } from "./support.js";

const t = testRedis("stats");
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

describe("streamStats", () => {
  it("reports length, pending, lag and the oldest pending entry per group", async () => {
    const stream = t.keys.stream("numbers");
    await t.redis.xgroup("CREATE", stream, "reader", "0", "MKSTREAM");
    await t.redis.xgroup("CREATE", stream, "idle", "0");
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(await publish(t.redis, stream, { n }));
    await t.redis.xreadgroup("GROUP", "reader", "x", "COUNT", 2, "STREAMS", stream, ">");
    await t.redis.xadd(t.keys.deadLetters(stream), "*", "data", "{}");

    const stats = await streamStats(t.redis, stream, t.keys);
    expect(stats).toMatchObject({ stream, length: 5, deadLetters: 1 });
    const byName = new Map(stats.groups.map((g) => [g.group, g]));
    expect(byName.get("reader")).toMatchObject({
      consumers: 1,
      pending: 2,
      lag: 3,
      lagExact: true,
      lastDeliveredId: ids[1],
      oldestPendingId: ids[0],
    });
    expect(byName.get("reader")?.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    expect(byName.get("reader")?.oldestPendingIdleMs).toBeGreaterThanOrEqual(0);
    expect(byName.get("idle")).toMatchObject({ consumers: 0, pending: 0, lag: 5, oldestPendingId: null, oldestPendingAgeMs: null });
    expect(await streamStats(t.redis, stream)).toMatchObject({ deadLetters: null });
  });

  it("counts the lag itself when Redis cannot (an undelivered entry was deleted)", async () => {
    const stream = t.keys.stream("holes");
    await t.redis.xgroup("CREATE", stream, "reader", "0", "MKSTREAM");
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(await publish(t.redis, stream, { n }));
    await t.redis.xreadgroup("GROUP", "reader", "x", "COUNT", 2, "STREAMS", stream, ">");
    await t.redis.xdel(stream, ids[3]);
    const [group] = (await streamStats(t.redis, stream)).groups;
    expect(group).toMatchObject({ pending: 2, lag: 2, lagExact: true });
  });

  it("is empty for a stream that does not exist", async () => {
    expect(await streamStats(t.redis, t.keys.stream("none"), t.keys)).toEqual({
      stream: t.keys.stream("none"),
      length: 0,
      deadLetters: 0,
      groups: [],
    });
  });

  it("feeds the handle's metrics and prom-client gauges and counters", async () => {
    const registry = new Registry();
    const actor = defineActor<Job>({
      name: "metered",
      streams: "metered",
      schema: jobSchema,
      blockMs: 200,
      statsIntervalMs: 50,
      handler: async () => {},
    });
    const handle = await runActor(actor, { ...t.deps("c1"), registry });
    handles.push(handle);
    // A second runner on the same registry reuses the metrics instead of throwing.
    const other = await runActor(defineActor({ ...actor, name: "metered2", group: "other" }), { ...t.deps("c1"), registry });
    handles.push(other);
    const stream = t.keys.stream("metered");
    await publish(t.redis, stream, { n: 1 });
    await publish(t.redis, stream, { n: "bad" });
    await waitFor(async () => (await handle.metrics()).streams[0].counters.deadLettered === 1, "the dead letter");
    // Both groups dead-letter their copy of the bad message; wait for the other one too.
    await waitFor(async () => (await other.metrics()).streams[0].counters.deadLettered === 1, "the other group's dead letter");
    const metrics = await handle.metrics();
    expect(metrics).toMatchObject({ actor: "metered", group: "metered", consumer: "c1", inFlight: 0 });
    expect(metrics.streams[0]).toMatchObject({ stream, length: 2, deadLetters: 2, counters: { handled: 1, deadLettered: 1 } });
    expect(metrics.streams[0].group).toMatchObject({ group: "metered", pending: 0, lag: 0 });

    const handled = await registry.getSingleMetric("gateway_actor_messages_handled_total")?.get();
    expect(handled?.values).toContainEqual({ labels: { actor: "metered", stream: "stream:metered", group: "metered" }, value: 1 });
    await waitFor(async () => {
      const length = await registry.getSingleMetric("gateway_actor_stream_length")?.get();
      return length?.values.some((v) => v.labels.stream === "stream:metered" && v.value === 2);
    }, "the length gauge");
    // The gauges refresh on their own interval: wait for the lag line rather than expect it at once.
    await waitFor(
      async () => (await registry.metrics()).includes('gateway_actor_group_lag{stream="stream:metered",group="metered"} 0'),
      "the lag gauge",
    );
  });
});
