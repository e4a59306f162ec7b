import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startSiemPusher, type SiemPusher } from "../../../actors/siem/index.js";
import { sendBatch } from "../../../actors/siem/transport/index.js";
import { insertDestination } from "../../../shared/events/db/siem.js";
import { type CountingHttp, startCountingHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { writeEvents } from "./support.js";

/**
 * Three pusher processes (in-process, each with its own name, Redis connections and
 * consumer name) share 1,000 destinations through leases; one is halted mid-run the way
 * a SIGKILL leaves it (leases and pending entries kept, nothing released). Every
 * destination gets every event of its organization, each process carried about a third,
 * the survivors take the halted one's destinations over, and no destination is ever sent
 * to by two processes at the same moment.
 */
const ORGS = 100;
const PER_ORG = 10;
const DESTINATIONS = ORGS * PER_ORG;
const NAMES = ["pusher-a", "pusher-b", "pusher-c"] as const;
// Timers at a pace a loaded 2-core machine keeps with 1,000 loops in one process: a claim
// round per loop every 4 s, a renewal of every lease each second.
const LEASE_TTL_MS = 6_000;

interface Send {
  owner: string;
  destination: number;
  ids: number[];
  start: number;
  end: number;
}

let gw: TestGateway;
let relay: RunningActor;
let collector: CountingHttp;
const pushers = new Map<string, SiemPusher>();
const sends: Send[] = [];
/** Destination id → its organization and collector path. */
const destinations = new Map<number, { orgId: number; path: string }>();
const orgs: number[] = [];

function recordingSend(owner: string): typeof sendBatch {
  return async (destination, events, network) => {
    const record: Send = {
      owner,
      destination: destination.id,
      ids: events.map((e) => e.id),
      start: performance.now(),
      end: Number.POSITIVE_INFINITY,
    };
    sends.push(record);
    try {
      await sendBatch(destination, events, network);
    } finally {
      record.end = performance.now();
    }
  };
}

/** What the pushers logged at info and above, by owner (shown when an assertion fails). */
const logs: string[] = [];

function startPusher(owner: string): Promise<SiemPusher> {
  const logger = pino({ level: "info", base: { owner } }, { write: (line: string) => void logs.push(line) });
  return startSiemPusher(
    { ...gw.ctx, logger },
    {
      owner,
      batchSize: 50,
      lingerMs: 20,
      claimIdleMs: 6_000,
      claimIntervalMs: 4_000,
      leaseTtlMs: LEASE_TTL_MS,
      balanceIntervalMs: 1_000,
      reloadMs: 60_000,
      send: recordingSend(owner),
    },
  );
}

const shares = () => Object.fromEntries([...pushers].map(([name, p]) => [name, p.running().length]));

beforeAll(async () => {
  collector = await startCountingHttp();
  gw = await startTestGateway("siemshare", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  for (let o = 0; o < ORGS; o++) {
    const created = await gw.admin("POST", "/orgs", { name: `Sharing ${o}`, plan: "enterprise" });
    orgs.push(created.body.org.id as number);
  }
  // Straight into the table, announced once: a thousand admin calls would make each pusher
  // re-read the destinations a thousand times.
  for (const orgId of orgs) {
    for (let d = 0; d < PER_ORG; d++) {
      const path = `/d/${orgId}/${d}`;
      const row = await insertDestination(gw.ctx.db, {
        orgId,
        kind: "http",
        url: `${collector.url}${path}`,
        indexName: null,
        nowMs: gw.ctx.clock.now(),
        sealToken: null,
      });
      destinations.set(row.id, { orgId, path });
    }
  }
  await gw.ctx.redis.incr(gw.ctx.keys.siemVersion());
  relay = await startOutboxRelay(gw.ctx);
}, 120_000);

afterAll(async () => {
  await Promise.all([...pushers.values()].map((p) => p.stop()));
  await relay?.stop();
  await gw?.stop();
  await collector?.close();
});

/** Writes `n` events for every organization; returns them by organization. */
async function writeRound(n: number, owed: Map<number, number[]>): Promise<void> {
  for (const orgId of orgs) owed.set(orgId, [...(owed.get(orgId) ?? []), ...(await writeEvents(gw, orgId, n))]);
}

function missing(owed: Map<number, number[]>): number {
  let count = 0;
  for (const { orgId, path } of destinations.values()) {
    const got = collector.byPath.get(path);
    for (const id of owed.get(orgId) ?? []) if (!got?.has(id)) count += 1;
  }
  return count;
}

describe("SIEM pushers sharing 1,000 destinations", () => {
  it("each carries about a third, a halted one's destinations move, nothing is lost or sent by two at once", async () => {
    const t0 = performance.now();
    const started = await Promise.all(NAMES.map((name) => startPusher(name)));
    for (const [i, name] of NAMES.entries()) pushers.set(name, started[i]);
    const total = () => [...pushers.values()].reduce((sum, p) => sum + p.running().length, 0);
    await waitFor(
      () => total() === DESTINATIONS && new Set([...pushers.values()].flatMap((p) => p.running())).size === DESTINATIONS,
      120_000,
      200,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(shares())}`);
    });
    for (const [name, pusher] of pushers) {
      const share = pusher.running().length / DESTINATIONS;
      expect(share, `${name}: ${JSON.stringify(shares())}`).toBeGreaterThan(0.2);
      expect(share, `${name}: ${JSON.stringify(shares())}`).toBeLessThan(0.5);
    }

    const owed = new Map<number, number[]>();
    await writeRound(2, owed);
    await waitFor(() => missing(owed) === 0, 120_000, 200).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${missing(owed)} deliveries missing`);
    });
    const carried = new Map<string, Set<number>>(NAMES.map((name) => [name, new Set()]));
    for (const send of sends) carried.get(send.owner)?.add(send.destination);
    for (const [name, set] of carried) {
      expect(set.size / DESTINATIONS, name).toBeGreaterThan(0.2);
      expect(set.size / DESTINATIONS, name).toBeLessThan(0.5);
    }

    // Mid-run: a round on its way to every destination, then pusher-b stops dead.
    const victim = pushers.get("pusher-b") as SiemPusher;
    const orphaned = new Set(victim.running());
    const before = new Map(owed);
    await writeRound(1, owed);
    const inFlight = new Set(orgs.flatMap((orgId) => (owed.get(orgId) ?? []).slice((before.get(orgId) ?? []).length)));
    await waitFor(() => sends.some((s) => s.owner === "pusher-b" && s.ids.some((id) => inFlight.has(id))), 30_000, 5);
    const haltedAt = performance.now();
    await victim.halt();
    pushers.delete("pusher-b");
    await writeRound(1, owed);

    await waitFor(() => total() === DESTINATIONS, 60_000, 200).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(shares())}`);
    });
    for (const [name, pusher] of pushers) {
      const share = pusher.running().length / DESTINATIONS;
      expect(share, `${name}: ${JSON.stringify(shares())}`).toBeGreaterThan(0.35);
      expect(share, `${name}: ${JSON.stringify(shares())}`).toBeLessThan(0.65);
    }
    await writeRound(1, owed);
    await waitFor(() => missing(owed) === 0, 120_000, 200).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${missing(owed)} deliveries missing`);
    });

    // Every id a collector saw is one of its organization's events, none is missing, and a
    // repeat (same id, at least once) is only of the round pusher-b had in hand when halted:
    // its unacknowledged fan-out and delivery entries, claimed by the survivors.
    let repeats = 0;
    for (const [id, { orgId, path }] of destinations) {
      const expected = new Set(owed.get(orgId));
      const got = collector.byPath.get(path) ?? new Map<number, number>();
      expect(
        [...got.keys()].filter((e) => !expected.has(e)),
        `destination ${id}`,
      ).toEqual([]);
      for (const [event, count] of got) {
        if (count === 1) continue;
        repeats += count - 1;
        const carriers = sends
          .filter((x) => x.destination === id && x.ids.includes(event))
          .map((x) => ({ owner: x.owner, start: Math.round(x.start - t0), end: Math.round(x.end - t0) }));
        expect(
          inFlight.has(event),
          `destination ${id}: event ${event} repeated outside the halted round: ${JSON.stringify(carriers)}, halted at ${Math.round(haltedAt - t0)}; ${logs
            .filter((l) => l.includes(`"destination":${id},`) || /lease|claimed/.test(l))
            .slice(0, 30)
            .join("")}`,
        ).toBe(true);
      }
    }
    // The takeover waited for the lease to run out: nobody sent to pusher-b's destinations
    // while it still could have been sending.
    const firstAfter = sends.filter((s) => s.owner !== "pusher-b" && orphaned.has(s.destination) && s.start > haltedAt - 1);
    for (const s of firstAfter) expect(s.start - haltedAt).toBeGreaterThan(LEASE_TTL_MS / 2);

    // Never two processes on one destination at the same moment.
    const byDestination = new Map<number, Send[]>();
    for (const s of sends) byDestination.set(s.destination, [...(byDestination.get(s.destination) ?? []), s]);
    for (const [id, list] of byDestination) {
      list.sort((a, b) => a.start - b.start);
      for (let i = 1; i < list.length; i++) {
        const overlapping = list.slice(0, i).filter((p) => p.owner !== list[i].owner && p.end > list[i].start);
        expect(overlapping, `destination ${id}`).toEqual([]);
      }
    }
    console.log(
      `sharing: ${JSON.stringify(Object.fromEntries([...carried].map(([n, set]) => [n, set.size])))} before the halt, ${JSON.stringify(shares())} after; ${repeats} repeats`,
    );
  }, 600_000);
});
