import { describe, expect, it } from "vitest";
import {
  isWellFormedOrgToken,
  looksLikeOrgToken,
  newOrgToken,
  ORG_TOKEN_LENGTH,
  ORG_TOKEN_PATTERN,
  ORG_TOKEN_SHOWN,
  orgTokenChecksum,
} from "../../../shared/accounts/token-format.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

describe("organization token format", () => {
  it("is gwt_ + 38 base62 characters, matched by the documented scanner pattern", () => {
    for (let i = 0; i < 200; i++) {
      const { token, prefix } = newOrgToken();
      expect(token).toHaveLength(ORG_TOKEN_LENGTH);
      expect(token).toMatch(/^gwt_[0-9A-Za-z]{38}$/);
      expect(ORG_TOKEN_PATTERN.test(token)).toBe(true);
      expect(isWellFormedOrgToken(token)).toBe(true);
      expect(looksLikeOrgToken(token)).toBe(true);
      expect(prefix).toBe(token.slice(0, ORG_TOKEN_SHOWN));
    }
  });

  it("ends with a checksum over the body: any one changed character is refused", () => {
    const { token } = newOrgToken();
    for (let position = 4; position < token.length; position++) {
      for (const replacement of ["0", "Z", "z"]) {
        if (token[position] === replacement) continue;
        const typo = `${token.slice(0, position)}${replacement}${token.slice(position + 1)}`;
        expect(isWellFormedOrgToken(typo), typo).toBe(false);
      }
    }
    const swapped = `${token.slice(0, 10)}${token[11]}${token[10]}${token.slice(12)}`;
    if (swapped !== token) expect(isWellFormedOrgToken(swapped)).toBe(false);
  });

  it("refuses truncated, extended, re-prefixed and non-base62 values", () => {
    const { token } = newOrgToken();
    for (const bad of [
      token.slice(0, -1),
      `${token}a`,
      `gwx_${token.slice(4)}`,
      `GWT_${token.slice(4)}`,
      `${token.slice(0, 20)}-${token.slice(21)}`,
      "gwt_",
      "",
    ]) {
      expect(isWellFormedOrgToken(bad), bad).toBe(false);
    }
  });

  it("draws the body from the given randomness, uniformly over base62", () => {
    let counter = 0;
    const fixed = (size: number) => Buffer.from(Array.from({ length: size }, () => counter++ % 256));
    const a = newOrgToken(fixed);
    // Bytes 248-255 are skipped (rejection sampling), so 0..61 map to the alphabet in order.
    expect(a.token.slice(4, 36)).toBe(BASE62.slice(0, 32));
    expect(a.token.slice(36)).toBe(orgTokenChecksum(a.token.slice(4, 36)));
    expect(orgTokenChecksum("x")).toHaveLength(6);
  });
});
