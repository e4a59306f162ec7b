import type { Clock } from "../../shared/platform/clock.js";
import { eventView, destinationById, eventsToReplay, recordDelivered, recordFailure } from "../../shared/events/index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import type { Redis } from "../../shared/platform/redis/client.js";
import { isNoGroupError } from "../../shared/platform/streams/redis-replies.js";
import { describeError } from "../runtime/index.js";
import type { LoadedDestination } from "./messages.js";
import type { PushNetwork } from "./transport/guard.js";
import { sendBatch } from "./transport/index.js";

/**
 * Replay from the events table for a destination whose stream was trimmed (MAXLEN) past
 * entries its loop had not read yet: a collector down for longer than the stream holds.
 *
 * The gap, in Redis's own terms: the group's `last-delivered-id` (the newest entry the loop
 * read) is below the oldest entry left, and more entries were added after it
 * (`entries-added` − the group's `entries-read`) than the stream still holds: some were
 * trimmed unread. (Trimming does not move `max-deleted-entry-id`, only XDEL does.) The missing events are the organization's events after the
 * destination's `last_event_id` (the highest id it acknowledged; from its creation time when
 * it never delivered one) and before the event of the oldest entry still on the stream. They
 * are sent from PostgreSQL in id order, one batch at a time, each recorded as delivered
 * before the next, so a crash resumes after the last batch acknowledged. Then the group's
 * cursor is set just below the oldest entry left, its `entries-read` to what was added before
 * it, and the loop reads on from there.
 * The loop does not run meanwhile: the replayed events reach the collector before the ones
 * on the stream. An event may arrive twice (one on the stream below the oldest entry's id, a
 * relay repeat): at least once, the same id each time.
 */
export interface ReplayDeps {
  db: Pool;
  redis: Redis;
  clock: Clock;
  network: PushNetwork;
  batchSize: number;
  send?: typeof sendBatch;
  /** False once the lease is gone: the replay stops before its next batch. */
  stillHeld(): boolean;
}

export interface StreamPosition {
  /** The group's cursor: the newest entry its consumers read. */
  lastDeliveredId: string;
  /** Entries the group read since it was made; null when Redis cannot tell (after an XDEL). */
  entriesRead: number | null;
  /** Entries ever added to the stream, and those it holds now. */
  entriesAdded: number;
  length: number;
  lastGeneratedId: string;
  /** The oldest entry left and its event id; null when the stream is empty. */
  firstEntryId: string | null;
  firstEventId: number | null;
}

/** Orders stream entry ids ("ms-seq"). */
export function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split("-").map(BigInt);
  const [bm, bs] = b.split("-").map(BigInt);
  if (am !== bm) return am < bm ? -1 : 1;
  if (as !== bs) return as < bs ? -1 : 1;
  return 0;
}

function fieldsOf(reply: unknown): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (!Array.isArray(reply)) return map;
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), reply[i + 1]);
  return map;
}

function eventIdOf(entry: unknown): number | null {
  if (!Array.isArray(entry) || !Array.isArray(entry[1])) return null;
  const data = fieldsOf(entry[1]).get("data");
  try {
    const id = (JSON.parse(String(data)) as { event?: { id?: unknown } }).event?.id;
    return typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}

/** Where the group stands on its stream; null when the stream or the group does not exist (yet). */
export async function streamPosition(redis: Redis, stream: string, group: string): Promise<StreamPosition | null> {
  let info: unknown;
  let groups: unknown;
  try {
    [info, groups] = await Promise.all([redis.xinfo("STREAM", stream), redis.xinfo("GROUPS", stream)]);
  } catch (error) {
    if (isNoGroupError(error) || (error instanceof Error && /no such key/i.test(error.message))) return null;
    throw error;
  }
  const mine = (Array.isArray(groups) ? groups : []).map(fieldsOf).find((g) => String(g.get("name")) === group);
  if (mine === undefined) return null;
  const fields = fieldsOf(info);
  const first = fields.get("first-entry");
  const read = mine.get("entries-read");
  return {
    lastDeliveredId: String(mine.get("last-delivered-id")),
    entriesRead: read === null || read === undefined ? null : Number(read),
    entriesAdded: Number(fields.get("entries-added") ?? 0),
    length: Number(fields.get("length") ?? 0),
    lastGeneratedId: String(fields.get("last-generated-id") ?? "0-0"),
    firstEntryId: Array.isArray(first) ? String(first[0]) : null,
    firstEventId: eventIdOf(first),
  };
}

/**
 * Entries were trimmed before the group read them. Without `entries-read` (Redis lost count
 * after an XDEL) a cursor below the oldest entry is taken for a gap: the replay then finds
 * nothing missing, or sends again what was in hand (at least once).
 */
export function hasGap(position: StreamPosition): boolean {
  const unread = position.entriesRead === null ? null : position.entriesAdded - position.entriesRead;
  if (position.firstEntryId === null) return unread !== null && unread > 0;
  if (compareEntryIds(position.lastDeliveredId, position.firstEntryId) >= 0) return false;
  return unread === null || unread > position.length;
}

/** The id just below `id` (XGROUP SETID there makes the group read `id` next). */
export function previousEntryId(id: string): string {
  const [ms, seq] = id.split("-").map(BigInt);
  if (seq > 0n) return `${ms}-${seq - 1n}`;
  return `${ms - 1n}-18446744073709551615`;
}

/** Replays what the destination missed, until no gap is left; returns the number of events sent. */
export async function replayGap(destination: LoadedDestination, stream: string, group: string, deps: ReplayDeps): Promise<number> {
  const send = deps.send ?? sendBatch;
  let replayed = 0;
  for (;;) {
    const position = await streamPosition(deps.redis, stream, group);
    if (position === null || !hasGap(position)) return replayed;
    const row = await destinationById(deps.db, destination.id);
    if (row === null) return replayed;
    let after = row.last_event_id;
    const sinceMs = after === 0 ? row.created_at.getTime() : null;
    for (;;) {
      if (!deps.stillHeld()) throw new Error(`destination ${destination.id}: lease lost during the replay`);
      const rows = await eventsToReplay(deps.db, {
        orgId: destination.orgId,
        afterId: after,
        beforeId: position.firstEventId,
        sinceMs,
        limit: deps.batchSize,
      });
      if (rows.length === 0) break;
      const events = rows.map(eventView);
      try {
        await send(destination, events, deps.network);
      } catch (error) {
        await recordFailure(deps.db, destination.id, describeError(error), 0, deps.clock.now()).catch(() => {});
        throw error;
      }
      after = events[events.length - 1].id;
      await recordDelivered(deps.db, destination.id, events.length, after, deps.clock.now());
      replayed += events.length;
    }
    // Everything below the oldest entry left is delivered: the loop reads on from there.
    const cursor = position.firstEntryId === null ? position.lastGeneratedId : previousEntryId(position.firstEntryId);
    await deps.redis.call("XGROUP", "SETID", stream, group, cursor, "ENTRIESREAD", position.entriesAdded - position.length);
  }
}
