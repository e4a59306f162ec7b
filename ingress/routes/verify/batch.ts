import type { Redis } from "ioredis";
import type { Clock } from "../../../shared/clock.js";
import { counts, scriptOutcome, type ScriptOutcome } from "../../../shared/enforcement/counting.js";
import { allowanceCycle } from "../../../shared/enforcement/expiry.js";
import type { Resolved } from "../../../shared/snapshots/cache.js";
import type { Reason } from "../../../shared/reasons.js";
import { shardOf, type Keys } from "../../../shared/redis/keys.js";
import { runScript, type LuaScript } from "../../../shared/redis/scripts.js";

/**
 * Every verify of one event-loop turn shares one counting script run per shard: calls
 * queue here and are flushed by setImmediate, which runs after the poll phase that
 * delivered them, so a burst of requests read together costs one EVALSHA per shard
 * instead of one per request. Counting stays exact: the script handles the calls one
 * after another, atomically. A batch is capped so one run never holds Redis long.
 */

export interface CountingCall {
  orgId: number;
  keyId: number;
  keyVersion: string;
  orgVersion: string;
  /** Outcome of the pure rules. */
  outcome: Reason | "ok";
  /** Whether that outcome counts against the allowance. */
  counts: boolean;
  ratePerMinute: number;
  /** null = unlimited. */
  allowance: number | null;
  /** "" when the call named no installation. */
  install: string;
  endpoint: string;
  nowMs: number;
  cycleStartMs: number;
}

/** The counting call of one judged request: what the script needs of its snapshots and outcome. */
export function countingCall(
  snapshot: Resolved,
  outcome: Reason | "ok",
  call: { install: string; endpoint: string; nowMs: number },
): CountingCall {
  const { key, org } = snapshot;
  return {
    orgId: org.value.id,
    keyId: key.value.id,
    keyVersion: key.v,
    orgVersion: org.v,
    outcome,
    counts: counts(outcome),
    ratePerMinute: key.value.rate_per_minute,
    allowance: org.value.allowance,
    install: call.install,
    endpoint: call.endpoint,
    nowMs: call.nowMs,
    cycleStartMs: allowanceCycle(org.value, call.nowMs).startMs,
  };
}

export interface BatchStats {
  /** Calls sent to the script. */
  calls: number;
  /** Script runs (Redis round trips). */
  runs: number;
}

export interface BatcherOptions {
  redis: Redis;
  keys: Keys;
  clock: Clock;
  script: LuaScript;
  maxBatch?: number;
  streamMaxLen?: number;
  /** Runs per shard waiting on Redis at once. */
  maxInFlight?: number;
  onRun?: (calls: number) => void;
}

interface Pending {
  call: CountingCall;
  resolve: (outcome: ScriptOutcome) => void;
  reject: (error: unknown) => void;
}

interface Group {
  first: CountingCall;
  members: Pending[];
}

/** Calls that share every per-key argument travel as one group (the script's header says so). */
function groupKey(c: CountingCall): string {
  return `${c.keyId}|${c.keyVersion}|${c.orgVersion}|${c.endpoint}|${Math.floor(c.nowMs / 60_000)}|${c.cycleStartMs}|${c.ratePerMinute}|${c.allowance}`;
}

export function createCountingBatcher(options: BatcherOptions) {
  const { redis, keys, clock, script } = options;
  const maxBatch = options.maxBatch ?? 256;
  const maxLen = String(options.streamMaxLen ?? 200_000);
  const maxInFlight = options.maxInFlight ?? 1;
  const queues = new Map<number, Pending[]>();
  const inFlight = new Map<number, number>();
  let scheduled = false;
  const stats: BatchStats = { calls: 0, runs: 0 };

  async function run(shard: number, batch: Pending[]): Promise<void> {
    const now = clock.now();
    const groups = new Map<string, Group>();
    for (const pending of batch) {
      const id = groupKey(pending.call);
      const group = groups.get(id);
      if (group) group.members.push(pending);
      else groups.set(id, { first: pending.call, members: [pending] });
    }
    const redisKeys: string[] = [keys.usageStream(shard)];
    const indexes = new Map<string, number>();
    const indexOf = (name: string): string => {
      let index = indexes.get(name);
      if (index === undefined) {
        index = redisKeys.push(name);
        indexes.set(name, index);
      }
      return String(index);
    };
    const args: string[] = [String(now), new Date(now).toISOString().slice(0, 10), maxLen, String(groups.size)];
    const order: Pending[] = [];
    for (const { first: c, members } of groups.values()) {
      args.push(
        indexOf(keys.keySnapshot(c.orgId, c.keyId)),
        indexOf(keys.orgSnapshot(c.orgId)),
        indexOf(keys.rateWindow(c.orgId, c.keyId, Math.floor(c.nowMs / 60_000))),
        indexOf(keys.cycleUsed(c.orgId, c.cycleStartMs)),
        indexOf(keys.installations(c.orgId, c.keyId)),
        c.keyVersion,
        c.orgVersion,
        String(c.ratePerMinute),
        c.allowance === null ? "-1" : String(c.allowance),
        String(c.orgId),
        String(c.keyId),
        c.endpoint,
        String(c.cycleStartMs),
        String(members.length),
      );
      for (const member of members) {
        args.push(member.call.outcome, member.call.counts ? "1" : "0", member.call.install);
        order.push(member);
      }
    }
    stats.calls += batch.length;
    stats.runs += 1;
    options.onRun?.(batch.length);
    let reply: unknown;
    try {
      reply = await runScript(redis, script, redisKeys, args);
    } catch (error) {
      for (const p of order) p.reject(error);
      return;
    }
    if (!Array.isArray(reply) || reply.length !== order.length) {
      const error = new Error(`counting script returned ${Array.isArray(reply) ? reply.length : typeof reply} results for ${order.length} calls`);
      for (const p of order) p.reject(error);
      return;
    }
    for (let i = 0; i < order.length; i++) {
      try {
        order[i].resolve(scriptOutcome(reply[i]));
      } catch (error) {
        order[i].reject(error);
      }
    }
  }

  /**
   * At most `maxInFlight` runs per shard wait on Redis; calls arriving meanwhile queue
   * and leave together when a run returns. Under load the batch grows with the load
   * (fewer, larger runs: less work for Redis and fewer wake-ups on a small machine);
   * when idle a call leaves at the end of its event-loop turn.
   */
  function flushShard(shard: number): void {
    const pending = queues.get(shard);
    if (!pending) return;
    while (pending.length > 0 && (inFlight.get(shard) ?? 0) < maxInFlight) {
      const batch = pending.splice(0, maxBatch);
      inFlight.set(shard, (inFlight.get(shard) ?? 0) + 1);
      void run(shard, batch).finally(() => {
        inFlight.set(shard, (inFlight.get(shard) ?? 1) - 1);
        flushShard(shard);
      });
    }
    if (pending.length === 0) queues.delete(shard);
  }

  function flush(): void {
    scheduled = false;
    for (const shard of [...queues.keys()]) flushShard(shard);
  }

  return {
    submit(call: CountingCall): Promise<ScriptOutcome> {
      return new Promise((resolve, reject) => {
        const shard = shardOf(call.orgId);
        const queue = queues.get(shard);
        if (queue) queue.push({ call, resolve, reject });
        else queues.set(shard, [{ call, resolve, reject }]);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    stats: (): BatchStats => ({ ...stats }),
  };
}

export type CountingBatcher = ReturnType<typeof createCountingBatcher>;
