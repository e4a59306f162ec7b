/**
 * Parsers for the replies of the stream commands. ioredis types these replies loosely
 * and their shape depends on the protocol (RESP2 nests [key, entries] pairs; RESP3 maps
 * may arrive flattened or as objects), so each reply is taken as `unknown` and checked
 * here once. A reply of an unexpected shape is a fault and throws.
 */
import type { Redis } from "../redis/client.js";

export interface StreamEntry {
  id: string;
  /** Flat [field, value, ...] list; null when the entry was deleted while pending (Redis 6.2). */
  fields: string[] | null;
}

export interface PendingSummary {
  count: number;
  minId: string | null;
  maxId: string | null;
  consumers: { name: string; pending: number }[];
}

export interface PendingEntry {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

function fault(what: string, value: unknown): Error {
  return new Error(`unexpected ${what} reply: ${JSON.stringify(value)?.slice(0, 200)}`);
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw fault(what, value);
  return value;
}

export function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  if (typeof value === "number") return String(value);
  throw fault("string", value);
}

export function integer(value: unknown): number {
  const n = typeof value === "number" ? value : Number(text(value));
  if (!Number.isFinite(n)) throw fault("integer", value);
  return n;
}

/** A RESP3 map as a record: accepts a flat [k, v, ...] array or an object. */
export function record(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (let i = 0; i + 1 < value.length; i += 2) out[text(value[i])] = value[i + 1];
    return out;
  }
  if (value !== null && typeof value === "object") return { ...value };
  throw fault("map", value);
}

export function parseEntries(value: unknown): StreamEntry[] {
  return list(value, "entries").map((raw) => {
    const entry = list(raw, "entry");
    const fields = entry[1] === null || entry[1] === undefined ? null : list(entry[1], "fields").map(text);
    return { id: text(entry[0]), fields };
  });
}

/** XREADGROUP: null on timeout; per stream its entries. */
export function parseReadGroup(reply: unknown): { stream: string; entries: StreamEntry[] }[] {
  if (reply === null || reply === undefined) return [];
  if (!Array.isArray(reply)) {
    return Object.entries(record(reply)).map(([stream, entries]) => ({ stream, entries: parseEntries(entries) }));
  }
  if (reply.length > 0 && !Array.isArray(reply[0])) {
    // A RESP3 map flattened to [key, entries, key, entries, ...].
    return Object.entries(record(reply)).map(([stream, entries]) => ({ stream, entries: parseEntries(entries) }));
  }
  return reply.map((pair) => {
    const [stream, entries] = list(pair, "stream reply");
    return { stream: text(stream), entries: parseEntries(entries) };
  });
}

/** XAUTOCLAIM: [next cursor, claimed entries, deleted ids (Redis 7)]. */
export function parseAutoClaim(reply: unknown): { cursor: string; entries: StreamEntry[]; deleted: string[] } {
  const parts = list(reply, "XAUTOCLAIM");
  return {
    cursor: text(parts[0]),
    entries: parseEntries(parts[1]),
    deleted: parts[2] === undefined ? [] : list(parts[2], "deleted ids").map(text),
  };
}

/** XPENDING key group: [count, min id, max id, [[consumer, count], ...]]. */
export function parsePendingSummary(reply: unknown): PendingSummary {
  const parts = list(reply, "XPENDING");
  const consumers = parts[3] === null || parts[3] === undefined ? [] : list(parts[3], "XPENDING consumers");
  return {
    count: integer(parts[0]),
    minId: parts[1] === null ? null : text(parts[1]),
    maxId: parts[2] === null ? null : text(parts[2]),
    consumers: consumers.map((c) => {
      const [name, pending] = list(c, "XPENDING consumer");
      return { name: text(name), pending: integer(pending) };
    }),
  };
}

/** XPENDING key group start end count: [[id, consumer, idle ms, times delivered], ...]. */
export function parsePendingEntries(reply: unknown): PendingEntry[] {
  return list(reply, "XPENDING range").map((raw) => {
    const [id, consumer, idle, deliveries] = list(raw, "XPENDING entry");
    return { id: text(id), consumer: text(consumer), idleMs: integer(idle), deliveries: integer(deliveries) };
  });
}

/** The ms part of a stream id (the Redis server time the entry was added). */
export function idTimestamp(id: string): number {
  return Number(id.split("-")[0]);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The stream or the group is gone: Redis lost its data, or someone deleted them. A read
 * blocked at that moment fails with "UNBLOCKED the stream key no longer exists"; the
 * next one with NOGROUP.
 */
export function isNoGroupError(error: unknown): boolean {
  const message = messageOf(error);
  return message.startsWith("NOGROUP") || (message.startsWith("UNBLOCKED") && message.includes("no longer exists"));
}

/** XINFO on a stream that does not exist. */
export function isNoSuchKeyError(error: unknown): boolean {
  return /no such key/i.test(messageOf(error));
}

/**
 * Create the group if missing. MKSTREAM so an actor can start before anyone publishes;
 * BUSYGROUP (the group exists: another copy of the actor made it) is the normal case.
 * `startId` "0" lets a group created late, or re-created after Redis lost everything,
 * process what the stream still holds instead of silently skipping it.
 */
export async function ensureGroup(redis: Redis, stream: string, group: string, startId: string, registry?: string): Promise<void> {
  try {
    await redis.xgroup("CREATE", stream, group, startId, "MKSTREAM");
  } catch (error) {
    if (!messageOf(error).startsWith("BUSYGROUP")) throw error;
  }
  // Every consumed stream is registered where it is made (registry.ts), BUSYGROUP or not.
  if (registry !== undefined) await redis.sadd(registry, stream);
}
