import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ALPHABET, randomToken } from "../../../shared/platform/crypto/hash.js";
import { issueKey, KEY_PATTERNS, keyChecksum, wellFormedKey } from "../../../shared/platform/crypto/key-format.js";

/** The checksum as docs/verify.md states it, computed with zlib's CRC-32, not the code's own. */
function documentedChecksum(text: string): string {
  let n = crc32(text);
  let out = "";
  for (let i = 0; i < 6; i++) {
    out = ALPHABET[n % 57] + out;
    n = Math.floor(n / 57);
  }
  return out;
}

const substitutes = (c: string) => [ALPHABET[(ALPHABET.indexOf(c) + 1) % 57], "0", "l", "_", "é"].filter((s) => s !== c);

describe("key format", () => {
  it("issues keys the documented regular expressions match, with the documented checksum", () => {
    for (const [kind, production] of [
      ["client", true],
      ["client", false],
      ["server", true],
      ["server", false],
    ] as const) {
      const { key, prefix } = issueKey(kind, production);
      expect(key).toMatch(KEY_PATTERNS[kind]);
      expect(key).not.toMatch(kind === "client" ? KEY_PATTERNS.server : KEY_PATTERNS.client);
      expect(key).not.toMatch(KEY_PATTERNS.legacyClient);
      expect(key).not.toMatch(KEY_PATTERNS.legacyServer);
      expect(key.startsWith(`${kind === "client" ? "ak" : "sk"}_${production ? "live" : "test"}_1`)).toBe(true);
      // The old format's length and characters: whatever read keys before reads these.
      expect(key).toMatch(kind === "client" ? /^ak_(live|test)_[A-Za-z0-9]{32}$/ : /^sk_(live|test)_[A-Za-z0-9]{40}$/);
      expect(prefix).toBe(key.slice(0, 12));
      expect(key.slice(-6)).toBe(documentedChecksum(key.slice(0, -6)));
      expect(keyChecksum(key.slice(0, -6))).toBe(documentedChecksum(key.slice(0, -6)));
      expect(wellFormedKey(key)).toBe(true);
      // A scanner finds it in text.
      expect(KEY_PATTERNS[kind].exec(`const KEY = "${key}";`)?.[0]).toBe(key);
    }
  });

  it("refuses every key with one character changed (but the marker into a letter) and every swap of two neighbours", () => {
    for (let round = 0; round < 5; round++) {
      for (const kind of ["client", "server"] as const) {
        const { key } = issueKey(kind, true);
        for (let i = 0; i < key.length; i++) {
          for (const c of substitutes(key[i])) {
            const typo = key.slice(0, i) + c + key.slice(i + 1);
            // The marker changed into a letter of the alphabet makes the shape of an old key: looked up, not refused here.
            const oldShape = i === 8 && ALPHABET.includes(c);
            expect(wellFormedKey(typo), `${typo} (position ${i})`).toBe(oldShape);
          }
          if (i + 1 < key.length && key[i] !== key[i + 1]) {
            const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
            expect(wellFormedKey(swapped), `${swapped} (swap at ${i})`).toBe(false);
          }
        }
        // Cut short, made longer, or without its checksum.
        expect(wellFormedKey(key.slice(0, -1))).toBe(false);
        expect(wellFormedKey(`${key}A`)).toBe(false);
        expect(wellFormedKey(key.slice(0, -6))).toBe(false);
      }
    }
  });

  it("lets keys of the old format through to the lookup, and nothing that no format ever issued", () => {
    for (const legacy of [`ak_live_${randomToken(32)}`, `sk_test_${randomToken(40)}`, `sk_live_${randomToken(32)}`]) {
      expect(wellFormedKey(legacy), legacy).toBe(true);
    }
    expect(`ak_live_${randomToken(32)}`).toMatch(KEY_PATTERNS.legacyClient);
    expect(`sk_live_${randomToken(40)}`).toMatch(KEY_PATTERNS.legacyServer);
    const legacyTypos = [
      `ak_live_${randomToken(31)}`,
      `ak_live_${randomToken(33)}`,
      `ak_live_${randomToken(31)}0`,
      `ak_live_${randomToken(31)}l`,
      `ak_live_${randomToken(31)}é`,
    ];
    for (const garbage of [
      "",
      "x",
      "hello world",
      "ak_prod_abc",
      "xk_live_abc",
      "AK_LIVE_abc",
      "ak-live-abc",
      "gwt_abc",
      "ak_live",
      "ak_live_",
      "ak_live_neverissued",
      ...legacyTypos,
    ]) {
      expect(wellFormedKey(garbage), garbage).toBe(false);
    }
  });
});
