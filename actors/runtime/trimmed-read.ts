import type { Redis } from "../../shared/platform/redis/client.js";
import { loadScript, runScript } from "../../shared/platform/redis/scripts.js";
import { parseEntries, type StreamEntry, text } from "../../shared/platform/streams/redis-replies.js";

/**
 * The read of an actor that must not read past entries trimmed before its group read them
 * (`onTrimmed` in define.ts): the check and the XREADGROUP in one script
 * (`read-unless-trimmed-n.lua`, which states the rule). Nothing is read when there is a hole.
 */
const READ_UNLESS_TRIMMED = loadScript("read-unless-trimmed-n.lua");

export type TrimmedRead = { trimmed: true } | { trimmed: false; cursor: string; entries: StreamEntry[] };

export async function readUnlessTrimmed(
  redis: Redis,
  stream: string,
  group: string,
  consumer: string,
  count: number,
  /** The script's KEYS[2] and KEYS[3] (define.ts `readTracking`), if any. */
  tracking: readonly string[] = [],
): Promise<TrimmedRead> {
  const reply = await runScript(redis, READ_UNLESS_TRIMMED, [stream, ...tracking], [group, consumer, count]);
  if (!Array.isArray(reply) || reply.length === 0) throw new Error(`unexpected read-unless-trimmed reply: ${JSON.stringify(reply)}`);
  if (Number(reply[0]) === 0) return { trimmed: true };
  return { trimmed: false, cursor: text(reply[1]), entries: parseEntries(reply[2] ?? []) };
}
