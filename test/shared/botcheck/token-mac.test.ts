import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { issueToken, verifyToken } from "../../../shared/botcheck/index.js";

/** The MAC of a pass token, computed independently with node:crypto's Hmac (token.ts's documented construction). */
function expectedMac(token: string, secret: Buffer): string {
  const [payload = ""] = token.split(".");
  return createHmac("sha256", secret)
    .update("access-gateway/botcheck-token\0")
    .update(Buffer.from(payload, "base64url"))
    .digest("base64url");
}

const claims = { keyId: "key_1", userAgent: "Mozilla/5.0 test", address: "203.0.113.7", nowS: 1_800_000_000 };

describe("pass token MAC (pads made once per secret)", () => {
  it("is HMAC-SHA256(secret, context ‖ payload) for secrets of one block and longer, and for long key ids", () => {
    for (const secret of [randomBytes(32), randomBytes(64), randomBytes(65), randomBytes(200)]) {
      for (const keyId of ["k", "key_1", "x".repeat(64)]) {
        const token = issueToken({ ...claims, keyId }, secret);
        expect(token.split(".")[1]).toBe(expectedMac(token, secret));
        expect(verifyToken(token, { ...claims, keyId }, secret)).toBe(true);
      }
    }
  });

  it("follows a secret buffer the caller overwrites: the old secret's tokens are refused", () => {
    const secret = randomBytes(32);
    const token = issueToken(claims, secret);
    expect(verifyToken(token, claims, secret)).toBe(true);
    randomBytes(32).copy(secret);
    expect(verifyToken(token, claims, secret)).toBe(false);
    const again = issueToken(claims, secret);
    expect(again.split(".")[1]).toBe(expectedMac(again, secret));
    expect(verifyToken(again, claims, secret)).toBe(true);
  });

  it("keeps two secrets apart", () => {
    const one = randomBytes(32);
    const two = randomBytes(32);
    const token = issueToken(claims, one);
    expect(verifyToken(token, claims, two)).toBe(false);
    expect(verifyToken(issueToken(claims, two), claims, one)).toBe(false);
    expect(verifyToken(token, claims, one)).toBe(true);
  });
});
