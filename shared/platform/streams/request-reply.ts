/**
 * Request/reply between ingress and an actor over a stream and a list.
 *
 * The request is an ordinary stream message with a fresh `reply_to` id; the actor's
 * `helpers.reply(payload)` LPUSHes the JSON reply onto keys.reply(id) and sets a short
 * expiry, so a reply nobody waits for any more (the requester timed out) disappears on
 * its own. The requester BLPOPs that list. A list rather than pub/sub because a reply
 * pushed before the requester starts waiting is kept, not lost.
 *
 * Every reply is checked against the schema the requester passes (it crossed a process
 * boundary): a reply that breaks it is a fault, ReplyContractError, never a value.
 */
import { randomUUID } from "node:crypto";
import { duplicateRedis, type Redis } from "../redis/client.js";
import type { Keys } from "../redis/keys.js";
import type { FromSchema } from "../schema-type.js";
import { ajv, guardOf } from "../validation.js";
import { publish } from "./envelope.js";

/** `request()` got no reply in time. The message may still be handled later. */
export class RequestTimeoutError extends Error {
  override readonly name = "RequestTimeoutError";
  constructor(
    readonly stream: string,
    readonly requestId: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply from ${stream} within ${timeoutMs} ms (request ${requestId})`);
  }
}

/** A reply that does not match its schema: the two sides disagree on the contract (a fault). */
export class ReplyContractError extends Error {
  override readonly name = "ReplyContractError";
  constructor(
    readonly stream: string,
    readonly requestId: string,
    detail: string,
  ) {
    super(`reply from ${stream} (request ${requestId}) breaks its schema: ${detail}`);
  }
}

export interface RequestOptions {
  maxLen?: number;
  /**
   * A connection reserved for this call's BLPOP. Without one, a duplicate of `redis` is
   * opened and closed around the call: a blocking pop must never hold the shared
   * connection, whose other commands would queue behind it.
   */
  connection?: Redis;
  /** The request id; a random UUID by default. */
  requestId?: string;
}

/**
 * Publish `payload` to `stream` (a stream key) and wait up to `timeoutMs` for the reply.
 * Resolves with the reply once it passes `replySchema`, typed by it; rejects with
 * RequestTimeoutError when none came, ReplyContractError when it breaks the schema. The
 * message may still be handled after a timeout: requests must be safe to abandon.
 */
export async function request<S extends object>(
  redis: Redis,
  keys: Keys,
  stream: string,
  payload: unknown,
  timeoutMs: number,
  replySchema: S,
  options: RequestOptions = {},
): Promise<FromSchema<S>> {
  const valid = guardOf(replySchema);
  const requestId = options.requestId ?? randomUUID();
  const connection = options.connection ?? duplicateRedis(redis);
  if (options.connection === undefined) connection.on("error", () => {});
  try {
    await publish(redis, stream, payload, { maxLen: options.maxLen, replyTo: requestId, registry: keys.streamRegistry() });
    // BLPOP takes seconds (fractions allowed since Redis 6); 0 would mean forever.
    const timeoutSeconds = Math.max(0.01, timeoutMs / 1000);
    const popped = await connection.blpop(keys.reply(requestId), timeoutSeconds);
    if (popped === null) throw new RequestTimeoutError(stream, requestId, timeoutMs);
    const reply: unknown = JSON.parse(popped[1]);
    if (!valid(reply)) throw new ReplyContractError(stream, requestId, ajv.errorsText(valid.errors));
    return reply;
  } finally {
    if (options.connection === undefined) connection.disconnect();
  }
}

/** The actor side: push the reply and let it expire if nobody pops it. */
export async function sendReply(redis: Redis, keys: Keys, requestId: string, payload: unknown, ttlSeconds: number): Promise<void> {
  const data = JSON.stringify(payload);
  if (data === undefined) throw new TypeError("reply is not JSON-serialisable");
  const key = keys.reply(requestId);
  const results = await redis.multi().lpush(key, data).expire(key, ttlSeconds).exec();
  const failed = results?.find(([error]) => error !== null);
  if (results === null || failed !== undefined) throw failed?.[0] ?? new Error(`reply to ${requestId} was not stored`);
}
