import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startSiemPusher, type SiemPusher, type PusherOptions } from "../../../actors/siem/index.js";
import { hasGap, type StreamPosition, streamPosition } from "../../../actors/siem/replay.js";
import { destinationById } from "../../../shared/events/db/siem.js";
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
    await Promise.all(pushers.splice(0).map((p) => p.stop()));
    const logs: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(line) });
    const pusher = await startSiemPusher(
      { ...gw.ctx, logger },
      {
        ...OPTIONS,
        owner: "replay-c",
        batchSize: 20,
        retry: { maxAttempts: 100, backoffBaseMs: 1_000, backoffMaxMs: 2_000 },
      },
    );
    pushers.push(pusher);
    await waitFor(() => pusher.running().includes(id));
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
});
