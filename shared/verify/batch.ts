import type { Redis } from "../platform/redis/client.js";
import type { Clock } from "../platform/clock.js";
import { counts, scriptOutcome, takesKeySlot, type ScriptOutcome } from "./counting.js";
import { sourceId } from "./source.js";
import { allowanceCycle } from "./expiry.js";
import type { Resolved } from "./snapshots/cache.js";
import type { Reason } from "../platform/reasons.js";
import { shardOf, type Keys } from "../platform/redis/keys.js";
import { runScript, type LuaScript } from "../platform/redis/scripts.js";
import { fieldsOf, VERIFY_BATCH_ARGS } from "../platform/redis/script-args.js";
import { ENDPOINT_LABELS_PER_DAY, OTHER_LABEL, PENDING_INSTALLS_PER_DAY, ROUTE_LABELS } from "./installations.js";

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
  /** The key's per-source limit (rate_per_source_per_minute); null or absent = none. */
  ratePerSource?: number | null;
  /** sourceId of the caller ("" or absent = none counted). */
  source?: string;
  /** null = unlimited. */
  allowance: number | null;
  /** "" when the endpoint takes no installation; UNNAMED_INSTALL for a verify call that named none. */
  install: string;
  endpoint: string;
  nowMs: number;
  cycleStartMs: number;
  /**
   * The UTC day (YYYY-MM-DD) the counting run recorded the call under, set by the batcher when
   * it sends the call: the run's own clock, which may be past midnight for a call made just
   * before it. A refund takes the count back under the same day.
   */
  day?: string;
}

/** The counting call of one judged request: what the script needs of its snapshots and outcome. */
export function countingCall(
  snapshot: Resolved,
  outcome: Reason | "ok",
  /**
   * `caller`: whose address names the source, read only when the key has a per-source limit;
   * `sourceOf` names it (sourceId with the deployment's IPv6 prefix).
   */
  call: {
    install: string;
    endpoint: string;
    nowMs: number;
    caller?: { readonly remoteAddress: string };
    sourceOf?: (remoteAddress: string) => string;
  },
): CountingCall {
  const { key, org } = snapshot;
  // A snapshot projected before the setting existed has no field: no per-source limit.
  const ratePerSource = key.value.rate_per_source_per_minute ?? null;
  return {
    orgId: org.value.id,
    keyId: key.value.id,
    keyVersion: key.v,
    orgVersion: org.v,
    outcome,
    counts: counts(outcome),
    ratePerMinute: key.value.rate_per_minute,
    ratePerSource,
    source: ratePerSource === null || call.caller === undefined ? "" : (call.sourceOf ?? sourceId)(call.caller.remoteAddress),
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

/** Called once with the script's answer for one call, or with the fault that prevented it. */
export type CountingDone = (error: unknown, outcome: ScriptOutcome | null) => void;

interface Pending {
  call: CountingCall;
  done: CountingDone;
}

interface Group<P> {
  first: CountingCall;
  members: P[];
}

interface Shape<P> extends Group<P> {
  /** KEYS indexes of the rate window and the per-source window ("0": none). */
  window: string;
  sourceWindow: string;
  /** KEYS index of the key's refusal window for a passing call the installation step may refuse ("0": none). */
  refusalWindow: string;
}

/** Calls that share every per-key argument travel as one group (the script's header says so). */
function groupKey(c: CountingCall): string {
  return `${c.keyId}|${c.keyVersion}|${c.orgVersion}|${c.endpoint}|${Math.floor(c.nowMs / 60_000)}|${c.cycleStartMs}|${c.ratePerMinute}|${c.ratePerSource ?? -1}|${c.allowance}`;
}

/**
 * groupKey(a) === groupKey(b), without building either: under load most calls of a batch
 * follow a call of their own group, so the string is built only when the group changes.
 */
function sameGroup(a: CountingCall, b: CountingCall): boolean {
  return (
    a.keyId === b.keyId &&
    a.keyVersion === b.keyVersion &&
    a.orgVersion === b.orgVersion &&
    a.endpoint === b.endpoint &&
    Math.floor(a.nowMs / 60_000) === Math.floor(b.nowMs / 60_000) &&
    a.cycleStartMs === b.cycleStartMs &&
    a.ratePerMinute === b.ratePerMinute &&
    (a.ratePerSource ?? -1) === (b.ratePerSource ?? -1) &&
    a.allowance === b.allowance
  );
}

/** Calls of a group that are alike (same outcome, counted flag, source and installation) travel as one script entry. */
function shapeKey(c: CountingCall): string {
  return `${c.outcome}|${c.counts ? 1 : 0}|${c.source ?? ""}|${c.install}`;
}

function sameShape(a: CountingCall, b: CountingCall): boolean {
  return a.outcome === b.outcome && a.counts === b.counts && (a.source ?? "") === (b.source ?? "") && a.install === b.install;
}

const HEAD = fieldsOf(VERIFY_BATCH_ARGS, "ARG_");
const GROUP = fieldsOf(VERIFY_BATCH_ARGS, "G_");
const SHAPE = fieldsOf(VERIFY_BATCH_ARGS, "S_");

/** One argument list of the script: its fields by name (script-args.ts), written in their order. */
function put<N extends string>(args: string[], names: readonly N[], fields: Record<N, string>): void {
  for (const name of names) args.push(fields[name]);
}

/** What one script run sends: KEYS, ARGV, and the calls in the order the script answers them. */
export interface EncodedBatch<P extends { call: CountingCall }> {
  keys: string[];
  args: string[];
  order: P[];
  /** ARG_DAY: the day the run records its calls under. */
  day: string;
}

/**
 * The KEYS and ARGV of one run of verify-batch-n.lua for `batch` (calls of one shard), laid
 * out as VERIFY_BATCH_ARGS names them: calls of one group share its per-key fields, alike
 * calls of a group are one shape with their number, and each key name is sent once.
 */
export function encodeBatch<P extends { call: CountingCall }>(
  keys: Keys,
  shard: number,
  now: number,
  maxLen: string,
  batch: readonly P[],
): EncodedBatch<P> {
  const groups = new Map<string, Group<P>>();
  let last: Group<P> | undefined;
  for (const pending of batch) {
    if (last !== undefined && sameGroup(last.first, pending.call)) {
      last.members.push(pending);
      continue;
    }
    const id = groupKey(pending.call);
    last = groups.get(id);
    if (last) last.members.push(pending);
    else groups.set(id, (last = { first: pending.call, members: [pending] }));
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
  const day = new Date(now).toISOString().slice(0, 10);
  const args: string[] = [];
  put(args, HEAD, {
    ARG_NOW: String(now),
    ARG_DAY: day,
    ARG_MAXLEN: maxLen,
    ARG_GROUPS: String(groups.size),
    ARG_OTHER_LABEL: OTHER_LABEL,
    ARG_PENDING_CAP: String(PENDING_INSTALLS_PER_DAY),
    ARG_LABEL_CAP: String(ENDPOINT_LABELS_PER_DAY),
  });
  const order: P[] = [];
  for (const { first: c, members } of groups.values()) {
    const minute = Math.floor(c.nowMs / 60_000);
    const perSource = c.ratePerSource ?? null;
    const group: Record<(typeof GROUP)[number], string> = {
      G_KEY_SNAPSHOT: indexOf(keys.keySnapshot(c.orgId, c.keyId)),
      G_ORG_SNAPSHOT: indexOf(keys.orgSnapshot(c.orgId)),
      G_CYCLE_USED: indexOf(keys.cycleUsed(c.orgId, c.cycleStartMs)),
      G_INSTALLATIONS: indexOf(keys.installations(c.orgId, c.keyId)),
      G_KEY_VERSION: c.keyVersion,
      G_ORG_VERSION: c.orgVersion,
      G_RATE: String(c.ratePerMinute),
      G_PER_SOURCE: perSource === null ? "-1" : String(perSource),
      G_ALLOWANCE: c.allowance === null ? "-1" : String(c.allowance),
      G_ORG: String(c.orgId),
      G_KEY: String(c.keyId),
      G_ENDPOINT: c.endpoint,
      G_CYCLE_START: String(c.cycleStartMs),
      // An endpoint's own label (`verify`, `content`, ...) is never capped: no set to consult.
      G_LABELS: ROUTE_LABELS.has(c.endpoint) ? "0" : indexOf(keys.endpointLabels(c.orgId, c.keyId, day)),
      G_PENDING_INSTALLS: indexOf(keys.pendingInstalls(c.orgId, c.keyId, day)),
      // The minute's installation sightings, named only when a call of the group names an installation.
      G_SIGHTINGS: "0",
      G_SHAPES: "0",
    };
    // Calls of one shape (same outcome, counted flag, installation and windows) travel as
    // one entry with their number: under load most calls of a key are alike.
    const shapes = new Map<string, Shape<P>>();
    let lastShape: Shape<P> | undefined;
    for (const member of members) {
      if (lastShape !== undefined && sameShape(lastShape.first, member.call)) {
        lastShape.members.push(member);
        continue;
      }
      const shapeId = shapeKey(member.call);
      lastShape = shapes.get(shapeId);
      if (lastShape) {
        lastShape.members.push(member);
        continue;
      }
      const { outcome, source, install } = member.call;
      if (install !== "" && group.G_SIGHTINGS === "0") group.G_SIGHTINGS = indexOf(keys.installSightings(c.orgId, c.keyId, minute));
      const window = takesKeySlot(outcome) ? keys.rateWindow(c.orgId, c.keyId, minute) : keys.refusalWindow(c.orgId, c.keyId, minute);
      const sourceWindow = perSource !== null && source ? indexOf(keys.sourceWindow(c.orgId, c.keyId, minute, source)) : "0";
      // A passing call that names an installation may yet be refused by the script's
      // installation step: such a refusal takes the refusal window, as the rules' own do.
      const refusalWindow = takesKeySlot(outcome) && install !== "" ? indexOf(keys.refusalWindow(c.orgId, c.keyId, minute)) : "0";
      lastShape = { first: member.call, window: indexOf(window), sourceWindow, refusalWindow, members: [member] };
      shapes.set(shapeId, lastShape);
    }
    group.G_SHAPES = String(shapes.size);
    put(args, GROUP, group);
    for (const { first, window, sourceWindow, refusalWindow, members: alike } of shapes.values()) {
      put(args, SHAPE, {
        S_CALLS: String(alike.length),
        S_OUTCOME: first.outcome,
        S_COUNTS: first.counts ? "1" : "0",
        S_INSTALL: first.install,
        S_WINDOW: window,
        S_SOURCE_WINDOW: sourceWindow,
        S_REFUSAL_WINDOW: refusalWindow,
      });
      for (const member of alike) order.push(member);
    }
  }
  return { keys: redisKeys, args, order, day };
}

/** The calls a run-length encoded reply answers; -1 when a count is not a positive integer. */
function answeredCalls(pairs: unknown[]): number {
  let total = 0;
  for (let i = 1; i < pairs.length; i += 2) {
    const n = pairs[i];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) return -1;
    total += n;
  }
  return total;
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
    const { keys: redisKeys, args, order, day } = encodeBatch(keys, shard, clock.now(), maxLen, batch);
    for (const p of order) p.call.day = day;
    stats.calls += batch.length;
    stats.runs += 1;
    options.onRun?.(batch.length);
    let reply: unknown;
    try {
      reply = await runScript(redis, script, redisKeys, args);
    } catch (error) {
      for (const p of order) p.done(error, null);
      return;
    }
    // Run-length encoded: (answer, number of consecutive calls) pairs, in the calls' order.
    const answered = Array.isArray(reply) && reply.length % 2 === 0 ? answeredCalls(reply) : -1;
    if (answered !== order.length) {
      const error = new Error(
        `counting script returned ${answered < 0 ? JSON.stringify(reply)?.slice(0, 200) : answered} results for ${order.length} calls`,
      );
      for (const p of order) p.done(error, null);
      return;
    }
    const pairs = reply as unknown[];
    let next = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const n = pairs[i + 1] as number;
      let outcome: ScriptOutcome;
      try {
        outcome = scriptOutcome(pairs[i]);
      } catch (error) {
        for (const end = next + n; next < end; next++) order[next].done(error, null);
        continue;
      }
      for (const end = next + n; next < end; next++) order[next].done(null, outcome);
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

  /** Queues one call; `done` runs when its batch returns (no promise per call on the hot path). */
  function enqueue(call: CountingCall, done: CountingDone): void {
    const shard = shardOf(call.orgId);
    const queue = queues.get(shard);
    if (queue) queue.push({ call, done });
    else queues.set(shard, [{ call, done }]);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }

  return {
    enqueue,
    submit(call: CountingCall): Promise<ScriptOutcome> {
      return new Promise((resolve, reject) => enqueue(call, (error, outcome) => (outcome === null ? reject(error) : resolve(outcome))));
    },
    stats: (): BatchStats => ({ ...stats }),
  };
}

export type CountingBatcher = ReturnType<typeof createCountingBatcher>;
