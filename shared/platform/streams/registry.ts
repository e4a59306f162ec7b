import type { ChainableCommander } from "ioredis";
import type { Redis } from "../redis/client.js";
import type { Keys } from "../redis/keys.js";

/**
 * The streams of this deployment, kept in one Redis set (keys.streamRegistry()) so /metrics
 * and the CLI read them with SMEMBERS instead of scanning the keyspace (docs/security.md,
 * item 6). A stream is added where it is made: the runtime's group creation (every stream an
 * actor consumes, on every start and after Redis lost it) and the publishers (publish() with
 * `registry`, the outbox relay). SADD is idempotent, so adding on every publish costs one
 * command in the same round trip and repairs a registry Redis lost. Dead-letter streams are
 * not registered: they are reported with their stream. The set and the streams sit in
 * different slots (on a Redis Cluster, different nodes): commands that name both are sent
 * side by side, never in one pipeline.
 */

export function registerStream(redis: Redis | ChainableCommander, keys: Pick<Keys, "streamRegistry">, stream: string) {
  return redis.sadd(keys.streamRegistry(), stream);
}

/**
 * Every registered stream that exists, or whose dead-letter stream does (its dead letters
 * outlive it), sorted. Names of streams gone entirely stay in the set: harmless, and a
 * stream re-made under the name is shown again at once.
 */
export async function registeredStreams(redis: Redis, keys: Pick<Keys, "streamRegistry" | "deadLetters">): Promise<string[]> {
  const names = (await redis.smembers(keys.streamRegistry())).sort();
  if (names.length === 0) return [];
  const found = await Promise.all(names.map((name) => Promise.all([redis.exists(name), redis.exists(keys.deadLetters(name))])));
  return names.filter((_, i) => found[i][0] + found[i][1] > 0);
}
