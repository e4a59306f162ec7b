import type { Redis } from "../../shared/platform/redis/client.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { CliFailure } from "./io.js";
import { registeredStreams } from "../../shared/platform/streams/registry.js";

/**
 * Every stream of the deployment and every dead-letter stream that exists, sorted: read from
 * the stream registry (shared/platform/streams/registry.ts), never by scanning the keyspace.
 */
export async function knownStreams(redis: Redis, keys: Keys): Promise<string[]> {
  const registered = await registeredStreams(redis, keys);
  if (registered.length === 0) return [];
  // Side by side, not one pipeline: a stream and its dead letters may sit on different cluster nodes.
  const replies = await Promise.all(registered.map((name) => Promise.all([redis.type(name), redis.exists(keys.deadLetters(name))])));
  const found: string[] = [];
  registered.forEach((name, i) => {
    if (replies[i][0] === "stream") found.push(name);
    if (replies[i][1] > 0) found.push(keys.deadLetters(name));
  });
  return found.sort();
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
