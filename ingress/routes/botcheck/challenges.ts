import { isCluster, type Redis } from "../../../shared/platform/redis/client.js";
import { loadScript, runScript } from "../../../shared/platform/redis/scripts.js";

/** `SET key record EX ttlS NX`: true when stored, false when the key exists; rejects as the command would. */
export type ChallengeWriter = (key: string, record: string, ttlS: number) => Promise<boolean>;

interface Pending {
  key: string;
  record: string;
  ttlS: number;
  resolve(stored: boolean): void;
  reject(error: unknown): void;
}

/**
 * The challenges issued in one event-loop turn, written to Redis as one command
 * (challenge-set-n.lua: each record as `SET key record EX ttl NX`): one socket write and
 * one ioredis command for them all instead of one per new visitor (that write was a third
 * of a challenge's in-process CPU, docs/benchmarks.md). Flushed by setImmediate, like the
 * counting batch (shared/verify/batch.ts), so a lone challenge waits for nothing but the
 * end of its turn. Each SET keeps its own answer (stored or exists); an error rejects every
 * challenge of the turn, as it would have each SET. A Redis Cluster spreads the nonces over
 * its slots and a script must stay in one: there each SET goes alone.
 */
const script = loadScript("challenge-set-n.lua");

export function createChallengeWriter(redis: Redis): ChallengeWriter {
  const alone: ChallengeWriter = async (key, record, ttlS) => (await redis.set(key, record, "EX", ttlS, "NX")) === "OK";
  if (isCluster(redis)) return alone;
  let queue: Pending[] = [];
  const flush = (): void => {
    const batch = queue;
    queue = [];
    if (batch.length === 1) {
      const [only] = batch;
      alone(only.key, only.record, only.ttlS).then(only.resolve, only.reject);
      return;
    }
    const keys: string[] = [];
    const args: string[] = [];
    for (const pending of batch) {
      keys.push(pending.key);
      args.push(pending.record, String(pending.ttlS));
    }
    runScript(redis, script, keys, args).then(
      (reply) => {
        const stored = reply as number[];
        for (let i = 0; i < batch.length; i++) batch[i].resolve(stored[i] === 1);
      },
      (error: unknown) => {
        for (const pending of batch) pending.reject(error);
      },
    );
  };
  return (key, record, ttlS) =>
    new Promise<boolean>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ key, record, ttlS, resolve, reject });
    });
}
