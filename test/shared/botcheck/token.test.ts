import { describe, expect, it } from "vitest";
import { issueToken, TOKEN_TTL_S, verifyToken } from "../../../shared/botcheck/token.js";
import { visitorNetwork } from "../../../shared/botcheck/network.js";
import { UA } from "./fixtures.js";

const secret = Buffer.alloc(32, 7);
const otherSecret = Buffer.alloc(32, 8);
const nowS = 1_750_000_000;
const claims = { keyId: 42, userAgent: UA.chromeWindows, address: "203.0.113.7" };
const token = issueToken({ ...claims, nowS, ttlS: TOKEN_TTL_S }, secret);

/** Replace one character with another of the alphabet. */
const flip = (text: string, at: number): string => {
  const c = text[at] === "A" ? "B" : "A";
  return text.slice(0, at) + c + text.slice(at + 1);
};

describe("pass token", () => {
  it("is two base64url parts", () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it("round-trips for the same key and user agent within its lifetime", () => {
    expect(verifyToken(token, { ...claims, nowS }, secret)).toBe(true);
    expect(verifyToken(token, { ...claims, nowS: nowS + TOKEN_TTL_S - 1 }, secret)).toBe(true);
    expect(verifyToken(token, { keyId: "42", userAgent: UA.chromeWindows, address: "203.0.113.7", nowS }, secret)).toBe(true);
  });

  it("defaults to 24 hours", () => {
    const t = issueToken({ ...claims, nowS }, secret);
    expect(verifyToken(t, { ...claims, nowS: nowS + 86_399 }, secret)).toBe(true);
    expect(verifyToken(t, { ...claims, nowS: nowS + 86_400 }, secret)).toBe(false);
  });

  it("expires at nowS + ttlS", () => {
    const short = issueToken({ ...claims, nowS, ttlS: 60 }, secret);
    expect(verifyToken(short, { ...claims, nowS: nowS + 59 }, secret)).toBe(true);
    expect(verifyToken(short, { ...claims, nowS: nowS + 60 }, secret)).toBe(false);
  });

  it.each([
    ["another key", { ...claims, keyId: 43, nowS }],
    ["a key id that only shares a prefix", { ...claims, keyId: 421, nowS }],
    ["another user agent", { ...claims, userAgent: UA.firefoxWindows, nowS }],
    ["a user agent differing in one character", { ...claims, userAgent: `${UA.chromeWindows} `, nowS }],
    ["another IPv4 /24", { ...claims, address: "203.0.114.7", nowS }],
    ["an IPv6 address", { ...claims, address: "2001:db8::7", nowS }],
    ["no readable address", { ...claims, address: "", nowS }],
  ])("is refused for %s", (_name, check) => {
    expect(verifyToken(token, check, secret)).toBe(false);
  });

  it("is refused under another secret", () => {
    expect(verifyToken(token, { ...claims, nowS }, otherSecret)).toBe(false);
  });

  it("is refused when any character of the payload or MAC is changed", () => {
    for (let at = 0; at < token.length; at++) {
      if (token[at] === ".") continue;
      expect(verifyToken(flip(token, at), { ...claims, nowS }, secret), `position ${at}`).toBe(false);
    }
  });

  it("is refused in a non-canonical base64url spelling that decodes to the same bytes", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = token.at(-1) ?? "A";
    // 32 bytes take 43 characters: the last one carries 2 unused bits, zero when canonical.
    const sameBytes = `${token.slice(0, -1)}${alphabet[alphabet.indexOf(last) | 1]}`;
    expect(Buffer.from(sameBytes.split(".")[1] ?? "", "base64url")).toEqual(Buffer.from(token.split(".")[1] ?? "", "base64url"));
    expect(verifyToken(sameBytes, { ...claims, nowS }, secret)).toBe(false);
  });

  it("is refused when the payload is re-signed with another secret or swapped in from another token", () => {
    const [payload] = token.split(".");
    const [, foreignMac] = issueToken({ ...claims, nowS, ttlS: 10 }, secret).split(".");
    expect(verifyToken(`${payload}.${foreignMac}`, { ...claims, nowS }, secret)).toBe(false);
    const forged = issueToken({ ...claims, nowS, ttlS: 10 * TOKEN_TTL_S }, otherSecret);
    expect(verifyToken(forged, { ...claims, nowS }, secret)).toBe(false);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a number", 12345],
    ["an object", { token }],
    ["empty", ""],
    ["one part", "abc"],
    ["three parts", `${token}.x`],
    ["bad characters", token.replace(/.$/, "=")],
    ["padding", `${token}=`],
    ["a short MAC", `${token.split(".")[0]}.AAAA`],
    ["an empty payload", `.${token.split(".")[1]}`],
    ["very long", `${"A".repeat(10_000)}.${token.split(".")[1]}`],
    ["whitespace around", ` ${token} `],
  ])("is refused without throwing for %s", (_name, garbage) => {
    expect(verifyToken(garbage, { ...claims, nowS }, secret)).toBe(false);
  });

  it("throws only for faults of the caller", () => {
    expect(() => issueToken({ ...claims, nowS }, Buffer.alloc(16))).toThrow(RangeError);
    expect(() => issueToken({ ...claims, nowS: 1.5 }, secret)).toThrow(RangeError);
    expect(() => issueToken({ ...claims, nowS, ttlS: 0 }, secret)).toThrow(RangeError);
    expect(() => issueToken({ ...claims, keyId: "", nowS }, secret)).toThrow(RangeError);
    expect(() => verifyToken(token, { ...claims, nowS }, Buffer.alloc(0))).toThrow(RangeError);
  });
});

describe("pass token network binding (docs/security.md, item 9)", () => {
  it("holds within the visitor's IPv4 /24 and IPv6 /48, and nowhere else", () => {
    expect(verifyToken(token, { ...claims, address: "203.0.113.250", nowS }, secret)).toBe(true);
    expect(verifyToken(token, { ...claims, address: "::ffff:203.0.113.1", nowS }, secret)).toBe(true);
    expect(verifyToken(token, { ...claims, address: "203.0.112.7", nowS }, secret)).toBe(false);
    const v6 = issueToken({ ...claims, address: "2001:db8:aa:1::7", nowS }, secret);
    expect(verifyToken(v6, { ...claims, address: "2001:db8:aa:ffff:1:2:3:4", nowS }, secret)).toBe(true);
    expect(verifyToken(v6, { ...claims, address: "2001:db8:ab:1::7", nowS }, secret)).toBe(false);
    expect(visitorNetwork("2001:db8:aa:1::7")).toBe("2001:db8:aa::/48");
    expect(visitorNetwork("10.1.2.3")).toBe("10.1.2.0/24");
  });

  it("refuses a version 1 token (issued before the binding)", () => {
    const payload = Buffer.from(token.split(".")[0] ?? "", "base64url");
    expect(payload.readUInt8(0)).toBe(2);
  });
});
