import type { FromSchema } from "../shared/platform/schema-type.js";
import { request, RequestTimeoutError } from "../shared/platform/streams/request-reply.js";
import type { IngressDeps } from "./deps.js";
import { refuse } from "./reply.js";
import type { HttpReply } from "./types.js";

/**
 * A route's request/reply to an actor: `message` on the stream named `stream`, and the reply
 * checked against `replySchema` (a reply that breaks it is a fault, thrown). No reply within
 * `timeoutMs` is the one refusal `timeout` (504), with the route's own fields and headers.
 */
export async function ask<S extends object>(
  deps: Pick<IngressDeps, "redis" | "keys">,
  call: {
    stream: string;
    message: unknown;
    replySchema: S;
    timeoutMs: number;
    /** What the `timeout` refusal carries besides its reason: fields, headers. */
    refusal?: { extra?: Record<string, unknown>; headers?: Record<string, string> };
  },
): Promise<{ ok: true; reply: FromSchema<S> } | { ok: false; refusal: HttpReply }> {
  try {
    const reply = await request(deps.redis, deps.keys, deps.keys.stream(call.stream), call.message, call.timeoutMs, call.replySchema);
    return { ok: true, reply };
  } catch (error) {
    if (error instanceof RequestTimeoutError) return { ok: false, refusal: refuse("timeout", call.refusal?.extra, call.refusal?.headers) };
    throw error;
  }
}
