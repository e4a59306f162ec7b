/**
 * An actor is a schema and a handler; everything else (reading, validation, ack,
 * retry, dead letters, claiming, drain, metrics) is the runtime's. `defineActor` only
 * checks and completes the options: it is pure, so actor modules can call it at import
 * time without touching Redis.
 */
import { Ajv, type SchemaObject, type ValidateFunction } from "ajv";
import ajvFormats from "ajv-formats";
import type { Redis } from "../../shared/platform/redis/client.js";
import type { Registry } from "prom-client";
import type { Clock } from "../../shared/platform/clock.js";
import type { Logger } from "../../shared/platform/log.js";
import type { Keys } from "../../shared/platform/redis/keys.js";

/**
 * What a handler gets besides its message. Idempotency: delivery is at-least-once, so a
 * handler must tolerate seeing a message again. Two tools, pick per effect:
 * - `messageId` (+ `stream`): unique per message; store it under a unique key in the
 *   same Postgres transaction as the effect (exactly-once for database effects);
 * - `once(step, fn)`: for effects outside the database (an e-mail, a webhook): runs fn
 *   unless a marker for (group, stream, messageId, step) exists, then sets the marker
 *   with fn's JSON result. At-least-once per step: a crash between fn and the marker
 *   repeats the step, nothing more.
 */
export interface Helpers<Db> {
  messageId: string;
  stream: string;
  group: string;
  consumer: string;
  /** 1 on the first delivery; the pending entry's delivery count after that. */
  attempt: number;
  maxAttempts: number;
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  /** Aborted when a drain times out: stop work, the message will be redelivered. */
  signal: AbortSignal;
  db: Db;
  /** Present when the sender waits for a reply (request/reply): LPUSH the JSON reply. */
  reply?: (payload: unknown) => Promise<void>;
  once<R>(step: string, fn: () => Promise<R>): Promise<R>;
}

export type Handler<T, Db> = (message: T, helpers: Helpers<Db>) => Promise<void> | void;

/** Stream names (made into keys by keys.stream), or a function of the key builder for other keys. */
export type StreamSelector = string | readonly string[] | ((keys: Keys) => readonly string[]);

export interface ActorOptions {
  /** Messages in hand at once (running, queued or waiting for a retry). */
  concurrency: number;
  /** Deliveries before a message goes to the dead-letter stream. */
  maxAttempts: number;
  /** Backoff before attempt n+1 is min(backoffMaxMs, backoffBaseMs * 2^(n-1)). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A pending entry idle this long belongs to a dead consumer and is claimed. */
  claimIdleMs: number;
  /** How often to look for such entries. */
  claimIntervalMs: number;
  /** XREADGROUP BLOCK: also bounds how long stop() can wait for the read to return. */
  blockMs: number;
  /**
   * Pause after a read that brought messages, before the next read (0: none). For a busy
   * stream whose messages can wait a little: each read then brings what arrived during the
   * pause (one round trip and one XACK for many messages instead of one each).
   */
  readPauseMs: number;
  /** stop() waits this long for in-flight handlers before abandoning them. */
  drainTimeoutMs: number;
  /** Approximate cap of each dead-letter stream. */
  deadLetterMaxLen: number;
  /** Lifetime of the `once` markers: longer than any redelivery can take. */
  handledTtlMs: number;
  /** Lifetime of a reply list nobody popped (the requester timed out). */
  replyTtlSeconds: number;
  /** Where a newly created group starts: "0" (everything retained) or "$" (only new entries). */
  startId: "0" | "$";
  /** Pause after a failed read before trying again (Redis down). */
  errorDelayMs: number;
  /** How often the prom-client gauges are refreshed when a registry is given. */
  statsIntervalMs: number;
}

/**
 * Fair shares between the parties a stream's messages belong to (the scanner's
 * organizations): at most `perKey` handlers of one key run at once, a freed slot goes to
 * the next key in turn (fair-queue.ts), and up to `backlog` messages beyond `concurrency`
 * are held waiting their turn, so a message of another key behind one key's run of
 * messages in the stream is read and can start. Held messages are kept by the heartbeat;
 * at stop, those not started are left pending for another consumer to claim.
 */
export interface Fairness<T> {
  /** The party of a valid message; messages that fail validation share the key "". */
  key(message: T): string;
  /** Handlers of one key running at once, 1..concurrency. */
  perKey: number;
  /** Messages held beyond `concurrency`, waiting their turn. */
  backlog: number;
}

export interface ActorDefinition<T, Db = undefined> extends Partial<ActorOptions> {
  name: string;
  streams: StreamSelector;
  /** Consumer group; defaults to the actor name. One group per concern on a stream. */
  group?: string;
  /** JSON schema of the payload (ajv); T is declared beside it. */
  schema: SchemaObject;
  /**
   * The schema compiled (compileSchema), when many actors share one schema: compiling costs
   * about 9 ms of CPU, which an actor per SIEM destination would pay a thousand times.
   */
  compiled?: CompiledSchema<T>;
  handler: Handler<T, Db>;
  /** Without it, messages run in the order read, `concurrency` at a time. */
  fairness?: Fairness<T>;
  /**
   * For an actor that must not read past entries its stream's cap (MAXLEN) trimmed before its
   * group read them. With it, every read checks and reads in one script
   * (`read-unless-trimmed-n.lua`, trimmed-read.ts), so no trim comes between the check and
   * the read; on such a hole nothing is read, that stream is read no more, and this is called
   * once with its key: whoever runs the actor fills the hole and runs it anew (the SIEM
   * pusher replays from PostgreSQL). An idle stream is waited on with a blocking XREAD, which
   * consumes nothing, before the script reads. Entries pending in the group that the trim
   * took, found by the claimer (XAUTOCLAIM names them), count as such a hole too.
   */
  onTrimmed?: (stream: string) => void;
  /**
   * With `onTrimmed`: keys the read script keeps beside each stream (its KEYS[2] and KEYS[3]):
   * a hash recording every entry read (entry id → event id) until the handler removes it, and
   * a sorted set it prunes below the newest entry read. The SIEM pusher's `inhand` and `late`
   * (actors/siem/replay.ts), from which a replay finds what a trim took.
   */
  readTracking?: (stream: string) => readonly [inHand: string, late: string];
}

export interface CompiledSchema<T> {
  ajv: Ajv;
  validate: ValidateFunction<T>;
}

export function compileSchema<T>(schema: SchemaObject): CompiledSchema<T> {
  const ajv = new Ajv({ allErrors: true });
  // ajv-formats is CommonJS: under NodeNext its default import is module.exports, whose
  // `default` property is the plugin (the module sets it for exactly this case).
  ajvFormats.default(ajv);
  return { ajv, validate: ajv.compile<T>(schema) };
}

export interface Actor<T, Db> extends ActorOptions {
  readonly name: string;
  readonly group: string;
  readonly streams: StreamSelector;
  readonly schema: SchemaObject;
  readonly compiled?: CompiledSchema<T>;
  readonly handler: Handler<T, Db>;
  readonly fairness?: Fairness<T>;
  readonly onTrimmed?: (stream: string) => void;
  readonly readTracking?: (stream: string) => readonly [inHand: string, late: string];
}

export interface BaseDeps {
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  /** Unique per process (e.g. host-pid): pending entries are owned by this name. */
  consumerName: string;
  /** Counters and gauges are registered here when given. */
  registry?: Registry;
}

/** `db` is required exactly when the actor's handler needs one. */
export type RunDeps<Db> = BaseDeps & (undefined extends Db ? { db?: Db } : { db: Db });

/**
 * The claim timing for a claim idle time (ACTOR_CLAIM_IDLE_MS): a shorter idle time makes
 * failover faster (the fault suite), a longer one suits handlers that run long. The claimer
 * looks a few times per idle time, so failover takes about the idle time, not the interval
 * (`intervalMs`, the actor's own) on top.
 */
export function claimTiming(claimIdleMs: number, intervalMs: number): { claimIdleMs: number; claimIntervalMs: number } {
  return { claimIdleMs, claimIntervalMs: Math.min(intervalMs, Math.max(100, Math.floor(claimIdleMs / 3))) };
}

export const DEFAULTS: ActorOptions = {
  concurrency: 1,
  maxAttempts: 5,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  claimIdleMs: 30_000,
  claimIntervalMs: 10_000,
  blockMs: 5_000,
  readPauseMs: 0,
  drainTimeoutMs: 10_000,
  deadLetterMaxLen: 10_000,
  handledTtlMs: 7 * 24 * 3600_000,
  replyTtlSeconds: 60,
  startId: "0",
  errorDelayMs: 1_000,
  statsIntervalMs: 15_000,
};

const POSITIVE: readonly (keyof ActorOptions)[] = [
  "concurrency",
  "maxAttempts",
  "claimIdleMs",
  "claimIntervalMs",
  "blockMs",
  "deadLetterMaxLen",
  "handledTtlMs",
  "replyTtlSeconds",
  "statsIntervalMs",
];

export function defineActor<T, Db = undefined>(definition: ActorDefinition<T, Db>): Actor<T, Db> {
  if (!/^[A-Za-z0-9_.-]+$/.test(definition.name)) throw new Error(`actor name ${JSON.stringify(definition.name)}: use [A-Za-z0-9_.-]`);
  const actor: Actor<T, Db> = {
    ...DEFAULTS,
    ...definition,
    group: definition.group ?? definition.name,
  };
  for (const option of POSITIVE) {
    const value = actor[option];
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw new Error(`actor ${actor.name}: ${option} must be a positive integer`);
    }
  }
  for (const option of ["backoffBaseMs", "backoffMaxMs", "drainTimeoutMs", "errorDelayMs", "readPauseMs"] as const) {
    if (!Number.isFinite(actor[option]) || actor[option] < 0) throw new Error(`actor ${actor.name}: ${option} must be >= 0`);
  }
  const fairness = actor.fairness;
  if (fairness !== undefined) {
    if (!Number.isInteger(fairness.perKey) || fairness.perKey < 1 || fairness.perKey > actor.concurrency) {
      throw new Error(`actor ${actor.name}: fairness.perKey must be an integer from 1 to concurrency`);
    }
    if (!Number.isInteger(fairness.backlog) || fairness.backlog < 0)
      throw new Error(`actor ${actor.name}: fairness.backlog must be an integer >= 0`);
  }
  return Object.freeze(actor);
}

export function resolveStreams(selector: StreamSelector, keys: Keys): string[] {
  if (typeof selector === "function") return [...selector(keys)];
  const names = typeof selector === "string" ? [selector] : selector;
  return names.map((name) => keys.stream(name));
}

/** Delay before the attempt after `attempt` (1-based). */
export function backoffMs(options: Pick<ActorOptions, "backoffBaseMs" | "backoffMaxMs">, attempt: number): number {
  return Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}
