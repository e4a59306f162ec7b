import { describe, expect, it } from "vitest";
import { backoffMs, DEFAULTS, defineActor, isRetryable, PermanentError, RetryableError } from "../../../actors/runtime/index.js";
import { decodeFields, encodeFields } from "../../../shared/platform/streams/envelope.js";
import { jobSchema } from "./support.js";

describe("message encoding", () => {
  it("round-trips the payload and the envelope fields", () => {
    const fields = encodeFields(JSON.stringify({ n: 1 }), { replyTo: "r1", group: "g" });
    expect(fields).toEqual(["data", '{"n":1}', "reply_to", "r1", "group", "g"]);
    expect(decodeFields(fields)).toEqual({ ok: true, envelope: { payload: { n: 1 }, raw: '{"n":1}', replyTo: "r1", group: "g" } });
  });

  it("ignores unknown fields and refuses a missing or non-JSON data field", () => {
    expect(decodeFields(["data", "[1]", "future", "x"])).toMatchObject({
      ok: true,
      envelope: { payload: [1], replyTo: null, group: null },
    });
    expect(decodeFields(["other", "1"])).toMatchObject({ ok: false, reason: 'missing field "data"' });
    expect(decodeFields(["data", "{"])).toMatchObject({ ok: false, raw: "{" });
  });
});

describe("errors and options", () => {
  it("treats only PermanentError as final", () => {
    expect(isRetryable(new PermanentError("x"))).toBe(false);
    expect(isRetryable(new RetryableError("x"))).toBe(true);
    expect(isRetryable(new Error("x"))).toBe(true);
    expect(isRetryable("a string")).toBe(true);
  });

  it("doubles the backoff up to its cap", () => {
    const options = { backoffBaseMs: 100, backoffMaxMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((attempt) => backoffMs(options, attempt))).toEqual([100, 200, 400, 800, 1_000]);
  });

  it("fills defaults and refuses nonsense options", () => {
    const actor = defineActor({ name: "a", streams: "s", schema: jobSchema, handler: async () => {} });
    expect(actor).toMatchObject({ ...DEFAULTS, group: "a" });
    expect(() => defineActor({ name: "a", streams: "s", schema: jobSchema, handler: async () => {}, concurrency: 0 })).toThrow(
      /concurrency/,
    );
    expect(() => defineActor({ name: "a b", streams: "s", schema: jobSchema, handler: async () => {} })).toThrow(/name/);
  });
});
