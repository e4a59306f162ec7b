import { describe, expect, it } from "vitest";
import { ByteParts } from "../../ingress/types.js";

/** ByteParts: an answer's memoized bytes and per-call text, written into the HTTP layer's one buffer. */

describe("ByteParts", () => {
  const parts = [Buffer.from('{"a":"é",'), '"nonce":"€𝄞\u0000",', Buffer.alloc(0), '"n":1}'];
  const expected = Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)));

  it("writes its parts' UTF-8 bytes one after another", () => {
    const scratch = { buffer: Buffer.alloc(256, 0x78) };
    const written = new ByteParts(parts).writeInto(scratch);
    expect(written.equals(expected)).toBe(true);
    expect(new ByteParts(parts).toString()).toBe(expected.toString("utf8"));
  });

  it("grows a scratch buffer too short for them, and each answer overwrites the last", () => {
    const scratch = { buffer: Buffer.alloc(4) };
    const first = new ByteParts(parts).writeInto(scratch);
    expect(scratch.buffer.length).toBeGreaterThanOrEqual(expected.length);
    expect(first.equals(expected)).toBe(true);
    const second = new ByteParts(["short"]).writeInto(scratch);
    expect(second.toString()).toBe("short");
    expect(second.buffer).toBe(first.buffer);
  });
});
