import type { Clock } from "../../shared/platform/clock.js";
import {
  eventView,
  destinationById,
  eventsByIds,
  eventsToReplay,
  type EventRow,
  recordDelivered,
  recordFailure,
} from "../../shared/events/index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import type { Redis } from "../../shared/platform/redis/client.js";
import { streamSide } from "../../shared/platform/redis/keys.js";
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
 * trimmed unread. (Trimming does not move `max-deleted-entry-id`, only XDEL does.)
 *
 * The missing events are the organization's events after the destination's `last_event_id`
 * (the highest id it acknowledged; from its creation time when it never delivered one) up to
 * the highest event id appended up to the oldest entry left (its `hi` field, written by the
 * fan-out's siem-append-2.lua), or among the first `window` entries left on the stream (the
 * head) if higher, but for the ids the head holds (the loop reads those from the stream).
 * Not just those below the oldest entry's event: the fan-out does not append in id order. It runs up to
 * FANOUT_CONCURRENCY messages at once per pusher process (retries wait out their backoff in
 * their slot), its reader and claimer may each fill the free slots (twice that in hand), and
 * relays side by side publish their batches in either order. An event trimmed was appended
 * before every entry of the head; of those, at most the in-flight count can come from
 * messages read before it, so with a head longer than that (replayWindow), one head entry
 * at least came later on the `events` stream, with a higher id: the trimmed event is at or
 * below the head's highest id. Entries appended later than that (a claimer's, taken from a
 * dead pusher a minute on; a relay's republished after a crash) are covered by `hi`; ids
 * between the head's and `hi` that the stream still holds past the head are sent twice (at
 * least once). Below `last_event_id`: the fan-out's late ids (its `late` set) after the
 * group's cursor, sent first; and entries a loop read and never handed over (its `inhand`
 * hash), sent by recoverInHand before the loop starts: docs/events.md.
 *
 * Sent from PostgreSQL in id order, one batch at a time, each recorded as delivered before
 * the next, so a crash resumes after the last batch acknowledged: recorded no higher than
 * just below the lowest id the head holds above `last_event_id`, since those were skipped
 * and a trim may take them before the loop reads them (a resumed replay then sends them,
 * and again what it had sent above them: at least once). Within one replay, the ids the
 * previous pass skipped that a trim took since are sent at the start of the next pass.
 * Then the group's cursor is set just below the oldest entry left, its `entries-read` to
 * what was added before it, and the loop reads on from there.
 * The loop does not run meanwhile: the replayed events reach the collector before the ones
 * on the stream. An event may arrive twice (one the fan-out had in hand during the replay,
 * appended after the head; a relay repeat; a resumed replay): at least once, the same id
 * each time.
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
  /** How many entries at the stream's head bound the replay (replayWindow of the live pushers). */
  window(): Promise<number>;
}

/** The fan-out's concurrency (index.ts): messages of `events` one pusher process appends at once. */
export const FANOUT_CONCURRENCY = 256;
/** Events per relay batch (actors/outbox RELAY_BATCH); relays side by side publish theirs in either order. */
const RELAY_BATCH = 500;
/** Relay processes side by side the window allows for. */
const RELAYS = 5;

/**
 * The head of a destination's stream that bounds a replay: more entries than the fan-out can
 * have appended out of order. Each pusher process holds at most twice its concurrency in hand
 * (reader and claimer each fill the free slots they saw), and a relay's batch can be
 * published after those of the (RELAYS − 1) others running beside it.
 */
export function replayWindow(pushers: number): number {
  return 2 * FANOUT_CONCURRENCY * Math.max(1, pushers) + (RELAYS - 1) * RELAY_BATCH;
}

export interface StreamPosition {
  /** The group's cursor: the newest entry its consumers read. */
  lastDeliveredId: string;
  /** Entries the group read since it was made; null when Redis cannot tell (a group made at `0` that has not read yet, an XDEL). */
  entriesRead: number | null;
  /** Redis's own count of the entries added after the cursor (`lag`): its estimate when `entriesRead` is null; null when it has none. */
  lag: number | null;
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
  const lag = mine.get("lag");
  return {
    lastDeliveredId: String(mine.get("last-delivered-id")),
    entriesRead: read === null || read === undefined ? null : Number(read),
    lag: lag === null || lag === undefined ? null : Number(lag),
    entriesAdded: Number(fields.get("entries-added") ?? 0),
    length: Number(fields.get("length") ?? 0),
    lastGeneratedId: String(fields.get("last-generated-id") ?? "0-0"),
    firstEntryId: Array.isArray(first) ? String(first[0]) : null,
    firstEventId: eventIdOf(first),
  };
}

/**
 * Entries were trimmed before the group read them. Without `entries-read`, Redis's `lag`
 * stands in (its estimate for a group made at `0` that has not read yet); without either
 * (an XDEL) a cursor below the oldest entry is taken for a gap: the replay then finds
 * nothing missing, or sends again what was in hand (at least once). The delivery loop's own
 * reads apply the same rule (shared/platform/redis/lua/read-unless-trimmed-n.lua), so a loop
 * that stops for a gap always finds it here.
 */
export function hasGap(position: StreamPosition): boolean {
  const unread = position.entriesRead === null ? position.lag : position.entriesAdded - position.entriesRead;
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

/** The first entries of a stream: their event ids, and the highest event id appended up to the oldest. */
export interface StreamHead {
  /** Event ids of the first entries (entries that cannot be read are left out). */
  ids: number[];
  /** The oldest entry's `hi` (siem-append-2.lua): no trimmed entry had a higher id; null when it has none. */
  hi: number | null;
}

/** The first `count` entries of the stream. */
export async function streamHead(redis: Redis, stream: string, count: number): Promise<StreamHead> {
  const entries = (await redis.xrange(stream, "-", "+", "COUNT", count)) as unknown[];
  const first = entries.length > 0 && Array.isArray(entries[0]) ? fieldsOf((entries[0] as unknown[])[1]).get("hi") : undefined;
  const hi = first === undefined ? Number.NaN : Number(first);
  return { ids: entries.map(eventIdOf).filter((id): id is number => id !== null), hi: Number.isSafeInteger(hi) ? hi : null };
}

/**
 * One page of events from the table to the collector, recorded as delivered (`last_event_id`
 * no higher than `recordUpTo`) before the next; a failure is recorded and thrown. Returns the
 * number sent.
 */
async function sendPage(destination: LoadedDestination, rows: readonly EventRow[], recordUpTo: number, deps: ReplayDeps): Promise<number> {
  if (!deps.stillHeld()) throw new Error(`destination ${destination.id}: lease lost during the replay`);
  const events = rows.map(eventView);
  try {
    await (deps.send ?? sendBatch)(destination, events, deps.network);
  } catch (error) {
    await recordFailure(deps.db, destination.id, describeError(error), 0, deps.clock.now()).catch(() => {});
    throw error;
  }
  await recordDelivered(deps.db, destination.id, events.length, Math.min(events[events.length - 1].id, recordUpTo), deps.clock.now());
  return events.length;
}

/** Replays what the destination missed, until no gap is left; returns the number of events sent. */
export async function replayGap(destination: LoadedDestination, stream: string, group: string, deps: ReplayDeps): Promise<number> {
  let replayed = 0;
  /** The highest id this replay sent, and the ids its previous pass left to the stream. */
  let sent = 0;
  let skipped: readonly number[] = [];
  const deliver = async (rows: EventRow[], recordUpTo: number) => {
    replayed += await sendPage(destination, rows, recordUpTo, deps);
  };
  for (;;) {
    const position = await streamPosition(deps.redis, stream, group);
    if (position === null || !hasGap(position)) return replayed;
    const row = await destinationById(deps.db, destination.id);
    if (row === null) return replayed;
    const { ids: head, hi } =
      position.firstEntryId === null ? { ids: [], hi: null } : await streamHead(deps.redis, stream, await deps.window());
    const onStream = new Set(head);
    let after = Math.max(row.last_event_id, sent);
    const sinceMs = after === 0 ? row.created_at.getTime() : null;
    // Left to the stream by the previous pass, then trimmed before the loop read them; and
    // events appended late (below an id already on the stream) after the group's cursor,
    // trimmed unread: at or below `after`, where the range does not look.
    const late = await lateAfter(deps.redis, stream, position.lastDeliveredId);
    const taken = [...new Set([...skipped, ...late])].filter((id) => id <= after && !onStream.has(id)).sort((x, y) => x - y);
    for (let i = 0; i < taken.length; i += deps.batchSize) {
      const rows = await eventsByIds(deps.db, destination.orgId, taken.slice(i, i + deps.batchSize));
      if (rows.length > 0) await deliver(rows, 0);
    }
    // Recorded below the lowest id left to the stream: a resumed replay covers it if trimmed.
    // Every trimmed id is at or below the oldest entry's `hi`; without one (entries from
    // before it), the head's highest id bounds them as long as no entry came a window late.
    const upTo = head.length === 0 ? null : Math.max(...head, hi ?? 0);
    const except = head.filter((id) => id > after);
    const recordUpTo = except.length === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...except) - 1;
    for (;;) {
      const rows = await eventsToReplay(deps.db, {
        orgId: destination.orgId,
        afterId: after,
        upToId: upTo,
        except,
        sinceMs,
        limit: deps.batchSize,
      });
      if (rows.length === 0) break;
      await deliver(rows, recordUpTo);
      after = rows[rows.length - 1].id;
      sent = Math.max(sent, after);
    }
    skipped = head;
    // Everything below the oldest entry left is delivered: the loop reads on from there.
    const cursor = position.firstEntryId === null ? position.lastGeneratedId : previousEntryId(position.firstEntryId);
    await deps.redis.call("XGROUP", "SETID", stream, group, cursor, "ENTRIESREAD", position.entriesAdded - position.length);
    // The late ids below the oldest entry left are sent (or were delivered): the loop's reads prune the rest.
    if (position.firstEntryId !== null)
      await deps.redis.zremrangebyscore(streamSide(stream, "late"), "-inf", `(${entryMs(position.firstEntryId)}`);
  }
}

function entryMs(entryId: string): string {
  return entryId.split("-")[0];
}

/**
 * The event ids the fan-out appended late (below an id already on the stream: siem-append-2.lua)
 * from the millisecond of the group's cursor on: entries the loop had not read when they were
 * trimmed (its reads remove what they read: read-unless-trimmed-n.lua).
 */
async function lateAfter(redis: Redis, stream: string, cursor: string): Promise<number[]> {
  const members = await redis.zrangebyscore(streamSide(stream, "late"), entryMs(cursor), "+inf");
  return members.map(Number).filter((id) => Number.isSafeInteger(id) && id > 0);
}

/**
 * Entries a previous run of the loop read and did not hand over (deliver, or leave to the
 * dead letters), which the cap trimmed since: their ids are in the stream's `inhand` hash
 * (written by the loop's read script), their events in the table. A loop stopped while a
 * batch waited out its backoff, a process killed mid-batch, or a pending entry XAUTOCLAIM
 * found trimmed: once a later batch is delivered, `last_event_id` is above them and the gap
 * replay does not look there. Run before the loop starts (it must not be running: every
 * entry in the hash is then a leftover). Sent in id order; an entry still on the stream and
 * pending is left to the claimer, one on the stream and no longer pending was acked. Returns
 * the number of events sent.
 */
export async function recoverInHand(destination: LoadedDestination, stream: string, group: string, deps: ReplayDeps): Promise<number> {
  const inHand = streamSide(stream, "inhand");
  const recorded = await deps.redis.hgetall(inHand);
  const entryIds = Object.keys(recorded);
  if (entryIds.length === 0) return 0;
  const checks = deps.redis.pipeline();
  for (const entryId of entryIds) {
    checks.xrange(stream, entryId, entryId);
    checks.xpending(stream, group, entryId, entryId, 1);
  }
  const replies = (await checks.exec()) ?? [];
  const done: string[] = [];
  const gone: string[] = [];
  entryIds.forEach((entryId, i) => {
    const [rangeError, range] = replies[2 * i] ?? [null, null];
    const [pendingError, pending] = replies[2 * i + 1] ?? [null, null];
    if (rangeError !== null && rangeError !== undefined) throw rangeError;
    const onStream = Array.isArray(range) && range.length > 0;
    // No group (deleted with the stream): nothing is pending.
    const isPending = (pendingError === null || pendingError === undefined) && Array.isArray(pending) && pending.length > 0;
    if (!onStream) gone.push(entryId);
    else if (!isPending) done.push(entryId);
  });
  const eventIds = [...new Set(gone.map((entryId) => Number(recorded[entryId])).filter((id) => Number.isSafeInteger(id) && id > 0))].sort(
    (a, b) => a - b,
  );
  let sent = 0;
  for (let i = 0; i < eventIds.length; i += deps.batchSize) {
    const rows = await eventsByIds(deps.db, destination.orgId, eventIds.slice(i, i + deps.batchSize));
    if (rows.length > 0) sent += await sendPage(destination, rows, Number.MAX_SAFE_INTEGER, deps);
  }
  const handled = [...done, ...gone];
  if (handled.length > 0) {
    // Gone entries may still be named in the group's pending list: acked, so no claim finds them.
    if (gone.length > 0) await deps.redis.xack(stream, group, ...gone).catch(() => 0);
    await deps.redis.hdel(inHand, ...handled);
  }
  return sent;
}
