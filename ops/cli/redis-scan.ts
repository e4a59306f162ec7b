import type { Redis } from "ioredis";
import type { Keys } from "../../shared/redis/keys.js";
import { CliFailure } from "./io.js";

/** Escapes the glob characters of a prefix for SCAN MATCH. */
function glob(prefix: string): string {
  return prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Every stream under the prefix (SCAN ... TYPE stream), sorted. */
export async function scanStreams(redis: Redis, prefix: string): Promise<string[]> {
  const found = new Set<string>();
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${glob(prefix)}*`, "COUNT", 1000, "TYPE", "stream");
    cursor = next;
    for (const name of batch) found.add(name);
  } while (cursor !== "0");
  return [...found].sort();
}

const DEAD_SUFFIX = ":dead";

export function isDeadLetterStream(keys: Keys, name: string): boolean {
  return name.endsWith(DEAD_SUFFIX) && keys.deadLetters(name.slice(0, -DEAD_SUFFIX.length)) === name;
}

export function sourceOf(name: string): string {
  return name.slice(0, -DEAD_SUFFIX.length);
}

/**
 * Source streams to show: every stream that is not itself a dead-letter stream, plus the
 * source of any dead-letter stream whose source is gone (trimmed or deleted).
 */
export function sourceStreams(keys: Keys, names: readonly string[]): string[] {
  const sources = new Set(names.filter((n) => !isDeadLetterStream(keys, n)));
  for (const name of names) if (isDeadLetterStream(keys, name)) sources.add(sourceOf(name));
  return [...sources].sort();
}

/**
 * A stream named on the command line: the full key, the key without the prefix, or the
 * short name of keys.stream(); a trailing `:dead` is allowed. It must exist, or have dead letters.
 */
export async function resolveStream(redis: Redis, keys: Keys, name: string): Promise<string> {
  const bare = name.endsWith(DEAD_SUFFIX) ? sourceOf(name) : name;
  const candidates = [...new Set([bare, `${keys.prefix}${bare}`, keys.stream(bare)])];
  for (const candidate of candidates) {
    const [type, dead] = await Promise.all([redis.type(candidate), redis.exists(keys.deadLetters(candidate))]);
    if (type === "stream" || dead === 1) return candidate;
  }
  throw new CliFailure(`no stream ${JSON.stringify(name)} under prefix ${JSON.stringify(keys.prefix)} (see: gateway streams)`);
}

/** The name shown to an operator: without the deployment prefix. */
export function shortName(keys: Keys, name: string): string {
  return name.startsWith(keys.prefix) ? name.slice(keys.prefix.length) : name;
}
