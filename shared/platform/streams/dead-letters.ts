/**
 * Dead letters: messages no retry can fix (undecodable, invalid, a PermanentError) or
 * that ran out of attempts. Each source stream has one dead-letter stream,
 * keys.deadLetters(stream), shared by the groups reading it; an entry names its group,
 * so a retry goes back to that group only (the `group` envelope field) and the groups
 * that handled the original do not see it twice.
 *
 * Writes are sequential, never MULTI: a stream and its dead-letter stream can sit in
 * different Redis Cluster slots. The order makes a crash harmless: the dead letter is
 * written before the ack (at worst a duplicate dead letter, never a lost message) and a
 * retried letter is re-published before it is deleted (at worst a duplicate message,
 * which idempotent handlers absorb).
 */
import type { Redis } from "../redis/client.js";
import type { Keys } from "../redis/keys.js";
import { encodeFields, fieldMap } from "./envelope.js";
import { parseEntries } from "./redis-replies.js";

export type DeadReason = "undecodable" | "invalid" | "permanent" | "exhausted";

export interface DeadLetterInput {
  stream: string;
  /** Id of the original entry. */
  id: string;
  group: string;
  consumer: string;
  reason: DeadReason;
  /** The error message, or what was wrong with the message. */
  error: string;
  /** Attempts made (deliveries that ran the handler or crashed with it). */
  attempts: number;
  /** The original `data` field, byte for byte. */
  data: string;
  /** Clock time of the move (ms). */
  at: number;
}

export interface DeadLetter extends DeadLetterInput {
  /** Id of the entry in the dead-letter stream (what retry and delete take). */
  deadId: string;
}

/** Write the dead letter, then ack the original. */
export async function moveToDeadLetters(redis: Redis, keys: Keys, input: DeadLetterInput, maxLen: number): Promise<void> {
  const fields = [
    "data",
    input.data,
    "stream",
    input.stream,
    "id",
    input.id,
    "group",
    input.group,
    "consumer",
    input.consumer,
    "reason",
    input.reason,
    "error",
    input.error,
    "attempts",
    String(input.attempts),
    "at",
    String(input.at),
  ];
  await redis.xadd(keys.deadLetters(input.stream), "MAXLEN", "~", maxLen, "*", ...fields);
  await redis.xack(input.stream, input.group, input.id);
}

function toDeadLetter(deadId: string, fields: readonly string[], stream: string): DeadLetter {
  const map = fieldMap(fields);
  const reason = map.get("reason");
  return {
    deadId,
    stream: map.get("stream") ?? stream,
    id: map.get("id") ?? "",
    group: map.get("group") ?? "",
    consumer: map.get("consumer") ?? "",
    reason: reason === "undecodable" || reason === "invalid" || reason === "permanent" ? reason : "exhausted",
    error: map.get("error") ?? "",
    attempts: Number(map.get("attempts") ?? 0),
    data: map.get("data") ?? "",
    at: Number(map.get("at") ?? 0),
  };
}

/** Dead letters of one stream, oldest first; `after` (a deadId) pages on. */
export async function listDeadLetters(
  redis: Redis,
  keys: Keys,
  stream: string,
  options: { count?: number; after?: string } = {},
): Promise<DeadLetter[]> {
  const start = options.after === undefined ? "-" : `(${options.after}`;
  const reply: unknown = await redis.xrange(keys.deadLetters(stream), start, "+", "COUNT", options.count ?? 100);
  return parseEntries(reply).map((entry) => toDeadLetter(entry.id, entry.fields ?? [], stream));
}

export interface RetryOptions {
  /** Trim the stream to about this many entries as each letter goes back (default: no trim). */
  maxLen?: number;
  /** Puts one letter back instead of the plain XADD (the new entry's id); undefined: the plain XADD. */
  putBack?: (letter: DeadLetter) => Promise<string | undefined>;
}

/**
 * Re-publish dead letters to their original stream, addressed to their group, and
 * delete them. Unknown ids are skipped. Returns the new entry id of each retried letter.
 */
export async function retryDeadLetters(
  redis: Redis,
  keys: Keys,
  stream: string,
  deadIds: readonly string[],
  options: RetryOptions = {},
): Promise<{ deadId: string; newId: string }[]> {
  const dead = keys.deadLetters(stream);
  const retried: { deadId: string; newId: string }[] = [];
  for (const deadId of deadIds) {
    const [entry] = parseEntries(await redis.xrange(dead, deadId, deadId));
    if (entry === undefined || entry.fields === null) continue;
    const letter = toDeadLetter(entry.id, entry.fields, stream);
    const fields = encodeFields(letter.data, { group: letter.group || null });
    // Not trimmed unless asked: the stream's producers trim it to its own cap, which a
    // default here could cut far below (a SIEM destination's stream keeps ~1,000,000).
    const newId =
      (await options.putBack?.(letter)) ??
      (options.maxLen === undefined
        ? await redis.xadd(letter.stream, "*", ...fields)
        : await redis.xadd(letter.stream, "MAXLEN", "~", options.maxLen, "*", ...fields));
    if (newId === null) throw new Error(`XADD to ${letter.stream} returned no id`);
    await redis.xdel(dead, deadId);
    retried.push({ deadId, newId });
  }
  return retried;
}

/** Retry every dead letter of a stream (oldest first, in pages). */
export async function retryAllDeadLetters(
  redis: Redis,
  keys: Keys,
  stream: string,
  options: RetryOptions = {},
): Promise<{ deadId: string; newId: string }[]> {
  const all: { deadId: string; newId: string }[] = [];
  for (;;) {
    // Always read from the start: retried letters are deleted, so the next page moves up.
    const page = await listDeadLetters(redis, keys, stream, { count: 100 });
    if (page.length === 0) return all;
    const retried = await retryDeadLetters(
      redis,
      keys,
      stream,
      page.map((l) => l.deadId),
      options,
    );
    if (retried.length === 0) return all;
    all.push(...retried);
  }
}
