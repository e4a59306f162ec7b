import { createHash, createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  hmacBytePads,
  hmacBytes,
  hmacBytesPadded,
  hmacHex,
  hmacHexPadded,
  hmacPads,
  sha256,
} from "../../../shared/platform/crypto/hash.js";

/** hmacHex computes HMAC by hand over scratch buffers: it must equal node's Hmac for every key and message. */

describe("hmacHex", () => {
  const reference = (key: string | Buffer, message: string) => createHmac("sha256", key).update(message).digest("hex");

  it("equals createHmac at the edges: empty, block-sized and longer keys, UTF-8, messages past the scratch buffer", () => {
    const keys: (string | Buffer)[] = [
      "",
      `ak_live_${"x".repeat(32)}`,
      "k".repeat(64),
      "k".repeat(65),
      "clé-ü€𝄞",
      randomBytes(64),
      randomBytes(100),
    ];
    const messages = [
      "",
      "1795240280.17.1.example.com",
      "1795240280.17.1.bücher.example.𝄞",
      "m".repeat(4096),
      "m".repeat(4097),
      "€".repeat(2000),
    ];
    for (const key of keys) for (const message of messages) expect(hmacHex(key, message)).toBe(reference(key, message));
  });

  it("leaves nothing of one call's key in the next call's answer", () => {
    const long = hmacHex("a".repeat(60), "one");
    expect(hmacHex("b", "one")).toBe(reference("b", "one"));
    expect(hmacHex("a".repeat(60), "one")).toBe(long);
  });
});

describe("hmacHexPadded", () => {
  it("equals createHmac for every ASCII key of up to a block, and has no pads for a longer or non-ASCII key", () => {
    const reference = (key: string, message: string) => createHmac("sha256", key).update(message).digest("hex");
    const messages = [
      "",
      "1795240280.17.1.example.com.nonce",
      "1795240280.17.1.bücher.example.𝄞",
      // Either side of the room after the inner pad (1024 bytes, at most 3 per UTF-16 unit).
      "m".repeat(341),
      "€".repeat(341),
      "m".repeat(342),
      "1795240280.17.1.example.com.nonce",
      "m".repeat(4096),
      "m".repeat(4097),
      "€".repeat(2000),
    ];
    for (const key of ["", `ak_live_${"x".repeat(32)}`, "k".repeat(64), "\x7f~ \x00"]) {
      const pads = hmacPads(key);
      expect(pads).not.toBeNull();
      for (const message of messages) expect(hmacHexPadded(pads!, message)).toBe(reference(key, message));
      // Interleaved with another key's calls over the same scratch buffers.
      expect(hmacHex("other", "x")).toBe(reference("other", "x"));
      expect(hmacHexPadded(pads!, "again")).toBe(reference(key, "again"));
    }
    expect(hmacPads("k".repeat(65))).toBeNull();
    expect(hmacPads("€".repeat(22))).toBeNull();
    expect(hmacPads("clé-ü€𝄞")).toBeNull();
  });
});

describe("hmacBytes", () => {
  it("equals createHmac over the concatenated parts, for short, block-sized and longer keys and parts past the scratch buffer", () => {
    const keys = [randomBytes(32), randomBytes(64), randomBytes(65)];
    const parts: Buffer[][] = [
      [],
      [Buffer.from("context\0")],
      [Buffer.from("context\0"), randomBytes(40)],
      [randomBytes(3000), randomBytes(1200)],
    ];
    for (const key of keys) {
      for (const message of parts) {
        const reference = createHmac("sha256", key);
        for (const part of message) reference.update(part);
        expect(hmacBytes(key, ...message).equals(reference.digest())).toBe(true);
      }
    }
  });
});

describe("sha256", () => {
  it("equals createHash for text (UTF-8) and bytes", () => {
    for (const input of ["", "abc", "clé-ü€𝄞", Buffer.from([0, 255, 128, 7]), Buffer.alloc(1000, 0xc3)]) {
      expect(sha256(input).equals(createHash("sha256").update(input).digest())).toBe(true);
    }
  });
});

describe("hmacBytesPadded", () => {
  it("equals createHmac over the concatenated parts, within the pads' room and past it", () => {
    for (const key of [Buffer.alloc(0), randomBytes(32), randomBytes(64)]) {
      const pads = hmacBytePads(key, 40);
      expect(pads).not.toBeNull();
      for (const parts of [
        [],
        [Buffer.from("ctx")],
        [Buffer.from("ctx"), randomBytes(37)],
        [randomBytes(41)],
        [randomBytes(30), randomBytes(300)],
      ]) {
        const expected = createHmac("sha256", key);
        for (const part of parts) expected.update(part);
        expect(hmacBytesPadded(pads!, ...parts).equals(expected.digest())).toBe(true);
      }
    }
    expect(hmacBytePads(randomBytes(65), 40)).toBeNull();
  });
});
