import PQueue from "p-queue";
import { type SiemDestinationRow, destinationStreamName, SIEM_GROUP } from "../../shared/events/index.js";
import type { Logger } from "../../shared/platform/log.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import type { ActorHandle } from "../runtime/index.js";
import { announceMember, claimLease, type LeaseDeps, leaveMembers, liveMembers, ownerOf, releaseLease, renewLease } from "./leases.js";
import { hasGap, recoverInHand, type ReplayDeps, replayGap, streamPosition } from "./replay.js";
import type { LoadedDestination } from "./messages.js";

/**
 * The delivery loops this process runs: those of the destinations it holds the lease on
 * (leases.ts). Each round (every `intervalMs`, and when the destinations change) it takes
 * the free leases of the destinations rendezvous hashing gives it among the live members,
 * and stops then releases the loops of those that now belong to another member (or were
 * deleted). Renewal runs on a timer of its own, so a long replay or a slow start never
 * delays it; a lease found in another owner's hands, or not renewed for two thirds of its
 * lifetime (Redis unreachable), stops its loop at once, before another process may take it.
 *
 * Starting a loop first replays what the destination missed (replay.ts), so a destination
 * that fell behind the stream's cap while no loop ran catches up in order before reading
 * the stream. A running loop never reads past entries trimmed before it read them (the
 * runtime's `onTrimmed`): it stops reading and is restarted at once, which replays them;
 * `checkGaps` does the same for running loops held up by a collector down for longer than
 * the stream holds, before they free a slot to read.
 */
export interface AssignmentDeps {
  lease: LeaseDeps;
  keys: Keys;
  logger: Logger;
  /** Lease renewal and rebalancing period. */
  intervalMs: number;
  /** Milliseconds of a monotonic clock (lease validity is measured on it, not on the shared clock). */
  monotonic(): number;
  load(row: SiemDestinationRow): LoadedDestination;
  /** `onTrimmed`: the loop found entries trimmed before it read them, and stopped reading. */
  runLoop(destination: LoadedDestination, onTrimmed: () => void): Promise<ActorHandle>;
  replay: Omit<ReplayDeps, "stillHeld">;
  /** A loop stopped for good: the destination was deleted (drop its streams). */
  onRemoved(id: number): Promise<void>;
}

export interface Assignment {
  /** One rebalancing round against the current destinations. */
  balance(rows: readonly SiemDestinationRow[]): Promise<void>;
  /** Renews the membership and every lease held; stops the loops of leases lost. */
  renew(): Promise<void>;
  /** Replays the running destinations that fell behind their stream's cap. */
  checkGaps(): Promise<void>;
  running(): number[];
  /** Stops every loop and gives the leases back (a clean stop). */
  stop(): Promise<void>;
  /** Stops every loop at once and keeps the leases, as a killed process leaves them (tests). */
  halt(): Promise<void>;
}

export function createAssignment(deps: AssignmentDeps): Assignment {
  const { lease, logger } = deps;
  const ttl = lease.ttlMs;
  /** Destination id → monotonic time until which the lease is ours for sure. */
  const leases = new Map<number, number>();
  const loops = new Map<number, ActorHandle>();
  const rows = new Map<number, SiemDestinationRow>();
  const starting = new Map<number, Promise<void>>();
  // Loop starts (replay, group creation, blocking connection) a few at a time.
  const starts = new PQueue({ concurrency: 8 });
  let stopped = false;

  const held = (id: number) => !stopped && (leases.get(id) ?? 0) > deps.monotonic();

  /** The lease is gone (or may be): stop the loop without waiting for its batch. */
  const drop = async (id: number, why: string) => {
    if (!leases.delete(id)) return;
    logger.warn({ destination: id, owner: lease.owner }, `SIEM lease ${why}: loop stopped`);
    const handle = loops.get(id);
    loops.delete(id);
    await handle?.stop({ timeoutMs: 0 });
  };

  /** Stop the loop (drained: its batch finishes and is acked), then give the lease back. */
  const release = async (id: number) => {
    await starting.get(id);
    const handle = loops.get(id);
    loops.delete(id);
    await handle?.stop();
    leases.delete(id);
    await releaseLease(lease, id);
  };

  const start = (id: number) => {
    const task = starts.add(async () => {
      const row = rows.get(id);
      if (row === undefined || !held(id)) return;
      try {
        const destination = deps.load(row);
        const stream = deps.keys.stream(destinationStreamName(id));
        const replayDeps = { ...deps.replay, stillHeld: () => held(id) };
        const recovered = await recoverInHand(destination, stream, SIEM_GROUP, replayDeps);
        if (recovered > 0)
          logger.info(
            { destination: id, recovered },
            "SIEM destination: entries read but not delivered, then trimmed, sent from the events table",
          );
        const replayed = await replayGap(destination, stream, SIEM_GROUP, replayDeps);
        if (replayed > 0) logger.info({ destination: id, replayed }, "SIEM destination replayed from the events table");
        let handle: ActorHandle | null = null;
        let trimmedEarly = false;
        const onTrimmed = () => {
          if (handle === null) trimmedEarly = true;
          else restart(id, handle);
        };
        handle = await deps.runLoop(destination, onTrimmed);
        if (!held(id)) {
          await handle.stop({ timeoutMs: 0 });
          return;
        }
        loops.set(id, handle);
        if (trimmedEarly) restart(id, handle);
      } catch (error) {
        // Given back: the next round takes it again and retries (the collector may be down).
        if (stopped) return;
        logger.error({ err: error, destination: id }, "SIEM destination cannot start");
        leases.delete(id);
        await releaseLease(lease, id).catch(() => {});
      }
    });
    const tracked = task.finally(() => {
      if (starting.get(id) === tracked) starting.delete(id);
    });
    starting.set(id, tracked);
  };

  /**
   * The loop found entries trimmed before it read them: stop it (drained) and start it
   * again, which replays them before it reads on. Tracked as a start, so a release waits for
   * the new loop and stops that one.
   */
  const restart = (id: number, handle: ActorHandle) => {
    if (loops.get(id) !== handle) return;
    loops.delete(id);
    logger.warn({ destination: id }, "SIEM destination's stream was trimmed before its loop read it: replaying from the events table");
    const task = (async () => {
      await handle.stop();
      if (!held(id)) return;
      start(id);
      await starting.get(id);
    })();
    const tracked: Promise<void> = task
      .catch((error: unknown) => logger.error({ err: error, destination: id }, "SIEM destination cannot restart"))
      .finally(() => {
        if (starting.get(id) === tracked) starting.delete(id);
      });
    starting.set(id, tracked);
  };

  const renew = async () => {
    if (stopped) return;
    // Leases not renewed for 2/3 of their lifetime are given up before they can expire.
    for (const [id, until] of leases) if (until - deps.monotonic() < ttl / 3) await drop(id, "not renewed in time");
    const began = deps.monotonic();
    await announceMember(lease);
    const ids = [...leases.keys()];
    const kept = await Promise.all(ids.map((id) => renewLease(lease, id)));
    for (let i = 0; i < ids.length; i++) {
      // Released meanwhile (the renewal never takes a free lease back).
      if (!leases.has(ids[i])) continue;
      if (kept[i]) leases.set(ids[i], began + ttl);
      else await drop(ids[i], "lost (expired or held by another process)");
    }
  };

  const balance = async (current: readonly SiemDestinationRow[]) => {
    if (stopped) return;
    rows.clear();
    for (const row of current) rows.set(row.id, row);
    await announceMember(lease);
    const members = await liveMembers(lease);
    if (!members.includes(lease.owner)) members.push(lease.owner);
    for (const id of [...leases.keys()]) {
      if (rows.has(id)) continue;
      await release(id);
      await deps.onRemoved(id);
      logger.info({ destination: id }, "SIEM destination removed");
    }
    for (const id of rows.keys()) {
      const mine = ownerOf(id, members) === lease.owner;
      if (mine && !leases.has(id)) {
        const began = deps.monotonic();
        if (!(await claimLease(lease, id))) continue;
        leases.set(id, began + ttl);
        start(id);
      } else if (!mine && leases.has(id)) {
        await release(id);
      }
    }
  };

  const checkGaps = async () => {
    for (const [id, handle] of [...loops]) {
      const position = await streamPosition(lease.redis, deps.keys.stream(destinationStreamName(id)), SIEM_GROUP);
      if (position === null || !hasGap(position) || loops.get(id) !== handle) continue;
      logger.warn({ destination: id, ...position }, "SIEM destination fell behind its stream: replaying from the events table");
      loops.delete(id);
      await handle.stop();
      if (held(id)) start(id);
    }
  };

  return {
    balance,
    renew,
    checkGaps,
    running: () => [...loops.keys()].sort((a, b) => a - b),
    async stop() {
      await starts.onIdle();
      // A few at a time: one process may hold a thousand loops, each stop a few round trips.
      const releases = new PQueue({ concurrency: 16 });
      await Promise.all(
        [...leases.keys()].map((id) =>
          releases.add(() =>
            release(id).catch((error: unknown) => logger.warn({ err: error, destination: id }, "SIEM lease not released")),
          ),
        ),
      );
      stopped = true;
      await leaveMembers(lease).catch(() => {});
    },
    async halt() {
      stopped = true;
      starts.clear();
      await Promise.all([...loops.values()].map((handle) => handle.stop({ timeoutMs: 0 })));
      loops.clear();
    },
  };
}
