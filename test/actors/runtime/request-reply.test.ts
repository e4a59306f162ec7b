import { afterAll, describe, expect, it } from "vitest";
import { type ActorHandle, defineActor, runActor } from "../../../actors/runtime/index.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { ReplyContractError, RequestTimeoutError, request } from "../../../shared/platform/streams/request-reply.js";
import { type Job, jobSchema, testRedis, waitFor } from "./support.js";

const t = testRedis("rpc");

const doubledSchema = {
  type: "object",
  required: ["doubled", "by"],
  properties: { doubled: { type: "integer" }, by: { type: "string" } },
  additionalProperties: false,
} as const;
const handles: ActorHandle[] = [];
afterAll(async () => {
  for (const handle of handles) await handle.stop({ timeoutMs: 100 });
  await t.cleanup();
});

describe("request/reply", () => {
  it("returns the actor's reply", async () => {
    const hadReply: boolean[] = [];
    const actor = defineActor<Job>({
      name: "doubler",
      streams: "doubler",
      schema: jobSchema,
      blockMs: 200,
      handler: async (message, helpers) => {
        hadReply.push(helpers.reply !== undefined);
        await helpers.reply?.({ doubled: message.n * 2, by: helpers.consumer });
      },
    });
    handles.push(await runActor(actor, t.deps("c1")));
    const stream = t.keys.stream("doubler");
    const reply = await request(t.redis, t.keys, stream, { n: 21 }, 5_000, doubledSchema);
    expect(reply).toEqual({ doubled: 42, by: "c1" });
    // Typed by its schema: no cast.
    expect(reply.doubled + 0).toBe(42);
    // A plain message (nobody waiting) gets no reply helper.
    await publish(t.redis, stream, { n: 1 });
    await waitFor(() => hadReply.length === 2, "the plain message");
    expect(hadReply).toEqual([true, false]);
  });

  it("keeps the reply only briefly", async () => {
    const actor = defineActor<Job>({
      name: "late",
      streams: "late",
      schema: jobSchema,
      blockMs: 200,
      replyTtlSeconds: 30,
      handler: async (_message, helpers) => {
        await helpers.reply?.({ ok: true });
      },
    });
    handles.push(await runActor(actor, t.deps("c1")));
    // Publish as a requester that went away: the reply waits under its key, with a TTL.
    await publish(t.redis, t.keys.stream("late"), { n: 1 }, { replyTo: "gone" });
    await waitFor(async () => (await t.redis.llen(t.keys.reply("gone"))) === 1, "the reply");
    const ttl = await t.redis.ttl(t.keys.reply("gone"));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30);
  });

  it("times out when no actor answers", async () => {
    const stream = t.keys.stream("nobody");
    const error = await request(t.redis, t.keys, stream, { n: 1 }, 150, doubledSchema).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(150);
    expect(await t.redis.xlen(stream)).toBe(1);
  });

  it("refuses a reply that breaks its schema as a fault", async () => {
    const actor = defineActor<Job>({
      name: "liar",
      streams: "liar",
      schema: jobSchema,
      blockMs: 200,
      handler: async (message, helpers) => {
        await helpers.reply?.({ doubled: String(message.n * 2) });
      },
    });
    handles.push(await runActor(actor, t.deps("c1")));
    const error = await request(t.redis, t.keys, t.keys.stream("liar"), { n: 2 }, 5_000, doubledSchema).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyContractError);
  });
});
