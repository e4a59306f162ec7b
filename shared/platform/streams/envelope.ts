/**
 * The wire format of every stream message, and `publish`.
 *
 * An entry carries its payload as JSON in one field, `data`; schemas describe only the
 * payload. Envelope metadata lives in separate fields so it never collides with payload
 * properties:
 *
 *   data      JSON of the payload (required)
 *   reply_to  request id: the sender waits on keys.reply(reply_to) (request/reply)
 *   group     only this consumer group handles the entry; other groups ack and skip it
 *             (set when a dead letter is retried: the groups that succeeded already
 *             must not see it twice)
 *
 * Unknown fields are ignored, so fields can be added later. Lua scripts that XADD
 * (the verify script's usage events) write `data` with cjson.encode.
 */
import type { Redis } from "../redis/client.js";

export const FIELD_DATA = "data";
export const FIELD_REPLY_TO = "reply_to";
export const FIELD_GROUP = "group";

export interface Envelope {
  /** The payload, parsed but not yet validated. */
  payload: unknown;
  /** The raw `data` text, kept for dead letters (so what is retried is byte-identical). */
  raw: string;
  replyTo: string | null;
  group: string | null;
}

export type Decoded = { ok: true; envelope: Envelope } | { ok: false; reason: string; raw: string };

export interface PublishOptions {
  /** Approximate cap of the stream length (MAXLEN ~): trimming is cheap only when approximate. */
  maxLen?: number;
  replyTo?: string;
  group?: string;
  /** The stream registry's key (keys.streamRegistry()): the stream is added to it (registry.ts). */
  registry?: string;
}

/** Default cap of a stream: generous, so consumers that fall behind do not lose entries. */
export const DEFAULT_MAX_LEN = 100_000;

export function encodeFields(data: string, meta: { replyTo?: string | null; group?: string | null } = {}): string[] {
  const fields = [FIELD_DATA, data];
  if (meta.replyTo) fields.push(FIELD_REPLY_TO, meta.replyTo);
  if (meta.group) fields.push(FIELD_GROUP, meta.group);
  return fields;
}

export function fieldMap(fields: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i], fields[i + 1]);
  return map;
}

export function decodeFields(fields: readonly string[]): Decoded {
  const map = fieldMap(fields);
  const raw = map.get(FIELD_DATA);
  if (raw === undefined) return { ok: false, reason: `missing field "${FIELD_DATA}"`, raw: "" };
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch (error) {
    return { ok: false, reason: `field "${FIELD_DATA}" is not JSON: ${(error as Error).message}`, raw };
  }
  return {
    ok: true,
    envelope: { payload, raw, replyTo: map.get(FIELD_REPLY_TO) ?? null, group: map.get(FIELD_GROUP) ?? null },
  };
}

/** XADD one message with approximate MAXLEN trimming; returns the entry id. */
export async function publish(redis: Redis, stream: string, payload: unknown, options: PublishOptions = {}): Promise<string> {
  const data = JSON.stringify(payload);
  if (data === undefined) throw new TypeError("payload is not JSON-serialisable");
  const maxLen = options.maxLen ?? DEFAULT_MAX_LEN;
  let id: string | null;
  if (options.registry === undefined) id = await redis.xadd(stream, "MAXLEN", "~", maxLen, "*", ...encodeFields(data, options));
  else {
    // Sent back to back, not as one pipeline: on a Redis Cluster the two keys may live on different nodes.
    [id] = await Promise.all([
      redis.xadd(stream, "MAXLEN", "~", maxLen, "*", ...encodeFields(data, options)),
      redis.sadd(options.registry, stream),
    ]);
  }
  if (id === null) throw new Error(`XADD to ${stream} returned no id`);
  return id;
}
