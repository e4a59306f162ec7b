import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { loadDestination, startSiemPusher, type SiemPusher, type PusherOptions } from "../../../actors/siem/index.js";
import { hasGap, replayGap, replayWindow, type StreamPosition, streamPosition } from "../../../actors/siem/replay.js";
import { readUnlessTrimmed } from "../../../actors/runtime/trimmed-read.js";
import { moveToDeadLetters, retryDeadLetters, listDeadLetters } from "../../../shared/platform/streams/dead-letters.js";
import { appendToDestinations, siemPutBack } from "../../../shared/events/siem-stream.js";
import { pushNetwork } from "../../../actors/siem/transport/guard.js";
import { sendBatch } from "../../../actors/siem/transport/index.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { destinationById, recordDelivered } from "../../../shared/events/db/siem.js";
import { SIEM_GROUP } from "../../../shared/events/siem-stream.js";
import { type CountingHttp, startCountingHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addDestination, writeEvents } from "./support.js";

/**
 * A destination whose loop ran nowhere (its lease held by a process that stopped
 * answering) while its stream, capped at 50 entries here instead of ~1,000,000, was
 * trimmed past what it had read: once the lease is free, the pusher replays the missing
 * range from the events table, then reads on from the stream; every event arrives once,
 * in id order.
 */
let gw: TestGateway;
let relay: RunningActor;
let collector: CountingHttp;
const pushers: SiemPusher[] = [];

const OPTIONS: Partial<PusherOptions> = {
  batchSize: 200,
  lingerMs: 20,
  destinationMaxLen: 50,
  claimIdleMs: 6_000,
  claimIntervalMs: 1_000,
  leaseTtlMs: 6_000,
  balanceIntervalMs: 1_000,
};

beforeAll(async () => {
  collector = await startCountingHttp();
  gw = await startTestGateway("siemreplay", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  relay = await startOutboxRelay(gw.ctx);
});

afterAll(async () => {
  await Promise.all(pushers.map((p) => p.stop()));
  await relay?.stop();
  await gw?.stop();
  await collector?.close();
});

/**
 * Stops the running pushers and starts one (batches of 20, its info logs kept), so that it
 * holds destination `id`; resolves once its loop for `id` runs.
 */
async function onlyPusher(id: number, options: Partial<PusherOptions>): Promise<{ pusher: SiemPusher; logs: string[] }> {
  await Promise.all(pushers.splice(0).map((p) => p.stop()));
  const logs: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(line) });
  const pusher = await startSiemPusher({ ...gw.ctx, logger }, { ...OPTIONS, batchSize: 20, ...options });
  pushers.push(pusher);
  await waitFor(() => pusher.running().includes(id));
  return { pusher, logs };
}

describe("SIEM replay from the events table", () => {
  it("a destination trimmed past its position gets every event, in order, once", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Replay", plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const id = await addDestination(gw, orgId, { kind: "http", url: `${collector.url}/replay` });
    const first = await startSiemPusher(gw.ctx, { ...OPTIONS, owner: "replay-a" });
    pushers.push(first);
    await waitFor(() => first.running().includes(id));
    const early = await writeEvents(gw, orgId, 30);
    const arrived = () => collector.order.get("/replay") ?? [];
    await waitFor(() => arrived().length === early.length, 20_000);
    await first.stop();
    pushers.length = 0;

    // Another process "holds" the destination and never delivers; the fan-out goes on.
    const lease = gw.ctx.keys.siemLease(id);
    await gw.ctx.redis.set(lease, "stalled-elsewhere", "PX", 600_000);
    const second = await startSiemPusher(gw.ctx, { ...OPTIONS, owner: "replay-b" });
    pushers.push(second);
    const late = await writeEvents(gw, orgId, 500);
    const stream = gw.ctx.keys.stream(`events:siem:${id}`);
    await waitFor(async () => {
      const info = (await gw.ctx.redis.xinfo("STREAM", stream)) as unknown[];
      return Number(info[info.indexOf("entries-added") + 1]) >= early.length + late.length;
    }, 30_000);
    const position = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
    expect(position !== null && hasGap(position), JSON.stringify(position)).toBe(true);
    expect(await gw.ctx.redis.xlen(stream)).toBeLessThan(late.length / 2);
    expect(second.running()).not.toContain(id);

    // The stalled holder is gone: its lease runs out (deleted here rather than waited for).
    await gw.ctx.redis.del(lease);
    const all = [...early, ...late];
    await waitFor(() => arrived().length >= all.length, 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${arrived().length} of ${all.length} arrived`);
    });
    await waitFor(() => second.running().includes(id));
    expect(arrived()).toEqual(all);
    const after = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
    expect(after !== null && hasGap(after)).toBe(false);
    // Recorded once the collector answered the last batch.
    await waitFor(async () => (await destinationById(gw.ctx.db, id))?.last_event_id === all[all.length - 1]);

    // And the loop goes on from the stream afterwards.
    const more = await writeEvents(gw, orgId, 20);
    await waitFor(() => arrived().length >= all.length + more.length, 20_000);
    expect(arrived()).toEqual([...all, ...more]);
  }, 120_000);

  it("a running loop whose collector was down while its stream was trimmed is replayed once the collector is back", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Replay while running", plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const id = await addDestination(gw, orgId, { kind: "http", url: `${collector.url}/running` });
    // One pusher, so that it is the one holding the destination.
    const { pusher, logs } = await onlyPusher(id, {
      owner: "replay-c",
      retry: { maxAttempts: 100, backoffBaseMs: 1_000, backoffMaxMs: 2_000 },
    });
    collector.failing = true;
    const events = await writeEvents(gw, orgId, 400);
    const stream = gw.ctx.keys.stream(`events:siem:${id}`);
    // The loop holds two batches in backoff; the rest of its stream is trimmed unread.
    let seen: StreamPosition | null = null;
    await waitFor(async () => {
      const position = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
      seen = position;
      return position !== null && position.entriesAdded >= events.length && hasGap(position);
    }, 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(seen)}`);
    });
    const firstKept = (seen as StreamPosition | null)?.firstEventId ?? 0;
    collector.failing = false;
    // A retried batch may get through before the reload stops the loop.
    const early = [...(collector.order.get("/running") ?? [])];
    await pusher.reload();
    const arrived = () => new Set(collector.order.get("/running") ?? []);
    await waitFor(() => events.every((e) => arrived().has(e)), 30_000).catch((error: unknown) => {
      throw new Error(
        `${String(error)}: ${events.filter((e) => !arrived().has(e)).length} missing; ${logs
          .filter((l) => !l.includes("will retry"))
          .slice(0, 20)
          .join("")}`,
      );
    });
    await waitFor(() => pusher.running().includes(id));
    const position = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
    expect(position !== null && hasGap(position)).toBe(false);
    // The range below the oldest entry kept came in id order (first arrivals; a batch that
    // was in hand holds the lowest ids, so its retry landing first keeps the order).
    const missed = events.filter((e) => e < firstKept && !early.includes(e));
    expect(missed.length).toBeGreaterThan(100);
    const firstArrivals = [...new Set((collector.order.get("/running") ?? []).slice(early.length))].filter(
      (e) => e < firstKept && !early.includes(e),
    );
    expect(firstArrivals).toEqual(missed);
  }, 120_000);

  it("a running loop whose stream was trimmed between two of its reads replays the hole before reading on, with no periodic check", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Replay between reads", plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const id = await addDestination(gw, orgId, { kind: "http", url: `${collector.url}/between` });
    const { pusher, logs } = await onlyPusher(id, {
      owner: "replay-d",
      // The periodic re-read (and its gap check) never comes during the test.
      reloadMs: 3_600_000,
      // Equal retry delays, so the two batches in hand come back in the order they left.
      retry: { maxAttempts: 100, backoffBaseMs: 200, backoffMaxMs: 400 },
      random: () => 0,
    });
    const stream = gw.ctx.keys.stream(`events:siem:${id}`);
    const arrived = () => collector.order.get("/between") ?? [];

    // The collector is down for a moment: the loop's two batches wait out their backoffs,
    // every slot taken, so it does not read while the stream is trimmed past its cursor.
    collector.failing = true;
    const events = await writeEvents(gw, orgId, 400);
    let seen: StreamPosition | null = null;
    await waitFor(async () => {
      seen = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
      return seen !== null && seen.entriesAdded >= events.length && hasGap(seen);
    }, 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(seen)}`);
    });
    expect(arrived()).toEqual([]);
    collector.failing = false;

    // The batches in hand go through, the loop reads again: it must not skip the hole.
    await waitFor(() => events.every((e) => arrived().includes(e)), 30_000).catch((error: unknown) => {
      const missing = events.filter((e) => !arrived().includes(e));
      throw new Error(`${String(error)}: ${missing.length} of ${events.length} missing (${missing[0]}..${missing[missing.length - 1]})`);
    });
    expect(arrived()).toEqual(events);
    await waitFor(() => pusher.running().includes(id));
    const position = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
    expect(position !== null && hasGap(position)).toBe(false);
    // Saved by the loop's own read, not by the periodic check.
    expect(logs.some((l) => l.includes("trimmed before its loop read it"))).toBe(true);
    expect(logs.some((l) => l.includes("fell behind its stream"))).toBe(false);

    // And the loop goes on from the stream afterwards.
    const more = await writeEvents(gw, orgId, 20);
    await waitFor(() => arrived().length >= events.length + more.length, 20_000);
    expect(arrived()).toEqual([...events, ...more]);
  }, 120_000);

  /**
   * The fan-out appends with many messages in flight, so a higher id can land on a
   * destination's stream before a lower one. Here the stream holds a, b, d, c, e, f in that
   * order and is trimmed to its last three: d is gone while c, a lower id, is the oldest
   * entry left. Replaying only the ids below c would lose d.
   */
  const network = pushNetwork({
    outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
    resolver: null,
    caPem: null,
    timeoutMs: 10_000,
    hostname: "gateway.test",
  });
  /** A destination posting to `path`, six events of its organization, and its stream emptied with a fresh group; no pusher runs. */
  const emptyStream = async (path: string) => {
    // No pusher runs: nothing but the test appends to the destination's stream.
    await Promise.all(pushers.splice(0).map((p) => p.stop()));
    const created = await gw.admin("POST", "/orgs", { name: `Replay ${path}`, plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const id = await addDestination(gw, orgId, { kind: "http", url: `${collector.url}${path}` });
    const ids = await writeEvents(gw, orgId, 6);
    const stream = gw.ctx.keys.stream(`events:siem:${id}`);
    const redis = gw.ctx.redis;
    await redis.del(stream);
    await redis.call("XGROUP", "CREATE", stream, SIEM_GROUP, "0", "MKSTREAM", "ENTRIESREAD", "0");
    /** The fan-out's own append (siem-append-2.lua). */
    const append = (eventId: number) =>
      appendToDestinations(redis, gw.ctx.keys, [id], eventId, JSON.stringify({ org_id: orgId, event: { id: eventId } }), 1000);
    /** The side keys the loop's read writes: `inhand`, then `late`. */
    const tracking = [gw.ctx.keys.streamSide(stream, "inhand"), gw.ctx.keys.streamSide(stream, "late")];
    /** One gap replay of the destination as the loop's start runs it (a window of 2). */
    const replay = async (batchSize = 2) => {
      const row = await destinationById(gw.ctx.db, id);
      if (row === null) throw new Error("destination not found");
      const deps = { db: gw.ctx.db, redis, clock: gw.ctx.clock, network, batchSize, stillHeld: () => true, window: async () => 2 };
      await replayGap(loadDestination(gw.ctx, row), stream, SIEM_GROUP, deps);
    };
    return { id, orgId, ids, stream, redis, append, tracking, replay };
  };
  const outOfOrderStream = async (path: string) => {
    const { id, orgId, ids, stream, redis } = await emptyStream(path);
    const [a, b, c, d, e, f] = ids;
    const append = (eventId: number) => redis.xadd(stream, "*", "data", JSON.stringify({ org_id: orgId, event: { id: eventId } }));
    for (const eventId of [a, b, d, c, e, f]) await append(eventId);
    await redis.xtrim(stream, "MAXLEN", 3);
    const position = await streamPosition(redis, stream, SIEM_GROUP);
    expect(position !== null && hasGap(position), JSON.stringify(position)).toBe(true);
    expect(position?.firstEventId).toBe(c);
    const row = await destinationById(gw.ctx.db, id);
    if (row === null) throw new Error("destination not found");
    return { id, ids, stream, append, destination: loadDestination(gw.ctx, row) };
  };
  const readStream = async (stream: string): Promise<number[]> => {
    const reply = (await gw.ctx.redis.xreadgroup("GROUP", SIEM_GROUP, "test-loop", "COUNT", 100, "STREAMS", stream, ">")) as
      | [string, [string, string[]][]][]
      | null;
    return (reply?.[0]?.[1] ?? []).map(([, fields]) => (JSON.parse(fields[1]) as { event: { id: number } }).event.id);
  };

  it("an event the fan-out appended ahead of a lower id, then trimmed, is replayed", async () => {
    const { id, ids, stream, destination } = await outOfOrderStream("/reordered");
    const [a, b, c, d, e, f] = ids;
    const deps = { db: gw.ctx.db, redis: gw.ctx.redis, clock: gw.ctx.clock, network, batchSize: 2, stillHeld: () => true };
    const replayed = await replayGap(destination, stream, SIEM_GROUP, { ...deps, window: async () => replayWindow(1) });
    const fromReplay = collector.order.get("/reordered") ?? [];
    // What the loop reads next, from the cursor the replay left.
    const fromStream = await readStream(stream);
    const missing = ids.filter((x) => !fromReplay.includes(x) && !fromStream.includes(x));
    expect(missing, `replayed ${fromReplay.join(",")}, then the stream ${fromStream.join(",")}`).toEqual([]);
    // Replayed in id order, none of what the stream still holds.
    expect(fromReplay).toEqual([a, b, d]);
    expect(replayed).toBe(3);
    expect(fromStream).toEqual([c, e, f]);
    const after = await streamPosition(gw.ctx.redis, stream, SIEM_GROUP);
    expect(after !== null && hasGap(after)).toBe(false);
    // Recorded below c, which the stream still had to deliver: a resumed replay covers it.
    const recorded = (await destinationById(gw.ctx.db, id))?.last_event_id ?? -1;
    expect(recorded).toBeGreaterThanOrEqual(b);
    expect(recorded).toBeLessThan(c);
  }, 60_000);

  /**
   * A claimer appends a dead pusher's messages a minute late: here f is appended right after
   * a, then b, c, d and e, more than the replay's window (2 here) later, and the trim takes a
   * and f. The head's highest id (c) no longer bounds what was trimmed; the `hi` the fan-out
   * wrote on each entry does.
   */
  it("an event appended more than a window ahead of lower ids, then trimmed, is replayed", async () => {
    const { ids, stream, redis, append, replay } = await emptyStream("/late");
    const [a, b, c, d, e, f] = ids;
    for (const eventId of [a, f, b, c, d, e]) await append(eventId);
    await redis.xtrim(stream, "MAXLEN", 4);
    await replay();
    const fromReplay = collector.order.get("/late") ?? [];
    const fromStream = await readStream(stream);
    const missing = ids.filter((x) => !fromReplay.includes(x) && !fromStream.includes(x));
    expect(missing, `replayed ${fromReplay.join(",")}, then the stream ${fromStream.join(",")}`).toEqual([]);
    // In id order, the head's two left to the stream; d and e, past the head, come twice (at least once).
    expect(fromReplay).toEqual([a, d, e, f]);
    expect(fromStream).toEqual([b, c, d, e]);
  }, 60_000);

  /**
   * The fan-out put a lower id (a) after a higher one (b) the loop then read and delivered:
   * `last_event_id` is b, above a. a is trimmed before the loop reads it; the fan-out's
   * `late` set names it, so the replay sends it although it lies below what was delivered.
   */
  it("an event appended below an id already delivered, then trimmed unread, is replayed", async () => {
    const { id, orgId, stream, redis, append, tracking, replay } = await emptyStream("/below");
    const ids = [...(await writeEvents(gw, orgId, 2)), ...(await writeEvents(gw, orgId, 6))];
    const [a, b, c, d, e, f, g, h] = ids.slice(-8);
    await append(b);
    await append(a);
    // The loop reads b alone (its read records it in hand and prunes what it passed), delivers it.
    const read = await readUnlessTrimmed(redis, stream, SIEM_GROUP, "test-loop", 1, tracking);
    if (read.trimmed) throw new Error("no hole expected yet");
    expect(read.entries.map((entry) => entry.id)).toHaveLength(1);
    await redis.xack(stream, SIEM_GROUP, read.entries[0].id);
    await redis.hdel(tracking[0], read.entries[0].id);
    await recordDelivered(gw.ctx.db, id, 1, b, gw.ctx.clock.now());
    for (const eventId of [c, d, e, f, g, h]) await append(eventId);
    await redis.xtrim(stream, "MAXLEN", 3);
    await replay();
    const fromReplay = collector.order.get("/below") ?? [];
    const fromStream = await readStream(stream);
    expect(fromReplay, `then the stream ${fromStream.join(",")}`).toEqual([a, c, d, e]);
    expect(fromStream).toEqual([f, g, h]);
    // Sent: gone from the set.
    expect(await redis.zcard(tracking[1])).toBe(0);
  }, 60_000);

  it("a late id the loop read and delivered is not sent again by a replay, even in the millisecond of its newest entry", async () => {
    const { id, orgId, stream, redis, append, tracking, replay } = await emptyStream("/read-late");
    const [a, b, c, d, e, f, g, h] = await writeEvents(gw, orgId, 8);
    await append(b);
    await append(a);
    expect(await redis.zrange(tracking[1], "0", "-1")).toEqual([String(a)]);
    // One read takes both: a, the late one, is its newest entry, so its millisecond is the newest read.
    const read = await readUnlessTrimmed(redis, stream, SIEM_GROUP, "test-loop", 10, tracking);
    if (read.trimmed) throw new Error("no hole expected yet");
    expect(read.entries).toHaveLength(2);
    expect(await redis.zcard(tracking[1])).toBe(0);
    await redis.xack(stream, SIEM_GROUP, ...read.entries.map((entry) => entry.id));
    await redis.hdel(tracking[0], ...read.entries.map((entry) => entry.id));
    await recordDelivered(gw.ctx.db, id, 2, b, gw.ctx.clock.now());
    for (const eventId of [c, d, e, f, g, h]) await append(eventId);
    await redis.xtrim(stream, "MAXLEN", 3);
    await replay();
    expect(collector.order.get("/read-late") ?? []).toEqual([c, d, e]);
    expect(await readStream(stream)).toEqual([f, g, h]);
  }, 60_000);

  /**
   * A dead letter an operator retries goes back behind ids already delivered. Put back with
   * the fan-out's script (as the admin API and the CLI do), it is in the `late` set: trimmed
   * before the loop reads it, the replay still sends it. Retrying does not trim the stream.
   */
  it("a dead letter retried below an id already delivered, then trimmed unread, is replayed", async () => {
    const { id, orgId, stream, redis, append, replay } = await emptyStream("/retried");
    const [a, b, c, d, e, f] = await writeEvents(gw, orgId, 6);
    const data = (eventId: number) => JSON.stringify({ org_id: orgId, event: { id: eventId } });
    await moveToDeadLetters(
      redis,
      gw.ctx.keys,
      { stream, id: "1-1", group: SIEM_GROUP, consumer: "gone", reason: "exhausted", error: "503", attempts: 15, data: data(a), at: 0 },
      1000,
    );
    await append(b);
    const read = await readStream(stream);
    expect(read).toEqual([b]);
    await recordDelivered(gw.ctx.db, id, 1, b, gw.ctx.clock.now());
    const [letter] = await listDeadLetters(redis, gw.ctx.keys, stream);
    const [retried] = await retryDeadLetters(redis, gw.ctx.keys, stream, [letter.deadId], { putBack: siemPutBack(redis, gw.ctx.keys) });
    const [[, fields]] = (await redis.xrange(stream, retried.newId, retried.newId)) as [string, string[]][];
    expect(fields).toEqual(["data", data(a), "hi", String(b), "eid", String(a)]);
    expect(await redis.zrange(gw.ctx.keys.streamSide(stream, "late"), "0", "-1")).toEqual([String(a)]);
    for (const eventId of [c, d, e, f]) await append(eventId);
    expect(await redis.xlen(stream)).toBe(6);
    await redis.xtrim(stream, "MAXLEN", 2);
    await replay(10);
    expect(collector.order.get("/retried")).toEqual([a, c, d]);
    expect(await readStream(stream)).toEqual([e, f]);
  }, 60_000);

  /**
   * A loop delivers a later batch while an earlier one waits out its backoff, then its process
   * dies and the cap trims the earlier batch's entries: `last_event_id` is above them and the
   * group's pending list no longer has them. The stream's `inhand` hash, written by the read,
   * still names them: the next start sends them from the events table. Trimmed after the next
   * start instead, they are still pending then (left to the claimer); the claimer finds them
   * trimmed and the loop restarts, which sends them.
   */
  it.each([
    ["before the next start", false],
    ["after the next start, before its claimer takes them", true],
  ])(
    "a batch read, left in backoff by a killed process and trimmed %s, is sent from the events table",
    async (_when, afterStart) => {
      const created = await gw.admin("POST", "/orgs", { name: `Replay in hand ${afterStart}`, plan: "enterprise" });
      const orgId = created.body.org.id as number;
      const path = `/inhand-${afterStart}`;
      const id = await addDestination(gw, orgId, { kind: "http", url: `${collector.url}${path}` });
      const stream = gw.ctx.keys.stream(`events:siem:${id}`);
      const arrived = () => collector.order.get(path) ?? [];
      let held: Set<number> = new Set();
      const { pusher } = await onlyPusher(id, {
        owner: `replay-e-${afterStart}`,
        retry: { maxAttempts: 100, backoffBaseMs: 600_000, backoffMaxMs: 600_000 },
        // Batches holding one of the first 20 events fail: they wait out a ten-minute backoff.
        send: async (destination, events, net) => {
          if (events.some((event) => held.has(event.id))) throw new Error("collector refused this batch");
          await sendBatch(destination, events, net);
        },
      });
      const first = await writeEvents(gw, orgId, 20);
      held = new Set(first);
      const second = await writeEvents(gw, orgId, 20);
      await waitFor(() => second.every((e) => arrived().includes(e)), 20_000);
      await waitFor(async () => (await destinationById(gw.ctx.db, id))?.last_event_id === second[second.length - 1]);
      expect(arrived().some((e) => held.has(e))).toBe(false);

      // Killed with its first batch in backoff; the cap takes every entry.
      pushers.splice(pushers.indexOf(pusher), 1);
      await pusher.halt();
      if (!afterStart) await gw.ctx.redis.xtrim(stream, "MAXLEN", 0);
      await gw.ctx.redis.del(gw.ctx.keys.siemLease(id));
      held = new Set();
      // Its claimer takes entries idle for 12 s: the killed process's batch stays pending past the lease's move.
      const next = await startSiemPusher(gw.ctx, { ...OPTIONS, claimIdleMs: 12_000, batchSize: 20, owner: `replay-f-${afterStart}` });
      pushers.push(next);
      if (afterStart) {
        await waitFor(() => next.running().includes(id), 20_000);
        const pending = (await gw.ctx.redis.xpending(stream, SIEM_GROUP)) as [number, ...unknown[]];
        expect(pending[0]).toBe(first.length);
        await gw.ctx.redis.xtrim(stream, "MAXLEN", 0);
      }
      await waitFor(() => first.every((e) => arrived().includes(e)), 30_000).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${first.filter((e) => !arrived().includes(e)).length} of ${first.length} missing`);
      });
      await waitFor(() => next.running().includes(id), 20_000);
      expect(await gw.ctx.redis.hlen(gw.ctx.keys.streamSide(stream, "inhand"))).toBe(0);
      // And the loop goes on from the stream afterwards.
      const more = await writeEvents(gw, orgId, 5);
      await waitFor(() => more.every((e) => arrived().includes(e)), 20_000);
    },
    120_000,
  );

  it("ids left to the stream and trimmed during the replay are sent by its next pass", async () => {
    const { ids, stream, append, destination } = await outOfOrderStream("/reordered-twice");
    const [a, b, c, d, e, f] = ids;
    const late = await writeEvents(gw, destination.orgId, 3);
    let trimmed = false;
    const deps = {
      db: gw.ctx.db,
      redis: gw.ctx.redis,
      clock: gw.ctx.clock,
      network,
      batchSize: 2,
      stillHeld: () => true,
      window: async () => replayWindow(1),
      // While the first page is on its way, the fan-out appends three more and the trim
      // takes c, e and f, which the replay left to the stream.
      send: async (...args: Parameters<typeof sendBatch>) => {
        await sendBatch(...args);
        if (trimmed) return;
        trimmed = true;
        for (const eventId of late) await append(eventId);
        await gw.ctx.redis.xtrim(stream, "MAXLEN", 3);
      },
    };
    await replayGap(destination, stream, SIEM_GROUP, deps);
    const fromReplay = collector.order.get("/reordered-twice") ?? [];
    const fromStream = await readStream(stream);
    const all = [...ids, ...late];
    const missing = all.filter((x) => !fromReplay.includes(x) && !fromStream.includes(x));
    expect(missing, `replayed ${fromReplay.join(",")}, then the stream ${fromStream.join(",")}`).toEqual([]);
    // The first pass: a, b, d; the second: c (below what it sent), then e, f; the stream: the late three.
    expect(fromReplay).toEqual([a, b, d, c, e, f]);
    expect(fromStream).toEqual(late);
  }, 60_000);
});
