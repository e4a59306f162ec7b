import { describe, expect, it } from "vitest";
import { memoize } from "../../../shared/platform/memo.js";
import { uaHashBytes } from "../../../shared/botcheck/ua-hash.js";
import { createHash } from "node:crypto";

describe("memoize", () => {
  it("computes once per input while held, holds at most `limit`, and never holds long inputs", () => {
    const calls: string[] = [];
    const upper = memoize(
      (s) => {
        calls.push(s);
        return s.toUpperCase();
      },
      { limit: 2, maxLength: 5 },
    );
    expect([upper("a"), upper("a"), upper("b"), upper("b")]).toEqual(["A", "A", "B", "B"]);
    expect(calls).toEqual(["a", "b"]);
    upper("c"); // full: cleared, then holds c
    upper("a");
    expect(calls).toEqual(["a", "b", "c", "a"]);
    upper("longer");
    upper("longer");
    expect(calls.filter((s) => s === "longer")).toHaveLength(2);
  });

  it("holds only the answers `keep` admits, so refused inputs never fill it", () => {
    const calls: string[] = [];
    const check = memoize(
      (s: string) => {
        calls.push(s);
        return s.startsWith("ok") ? s.length : null;
      },
      { limit: 2, keep: (value) => value !== null },
    );
    expect(check("ok-1")).toBe(4);
    for (let i = 0; i < 10; i++) expect(check(`junk${i}`)).toBeNull();
    expect(check("ok-1")).toBe(4);
    expect(check("junk0")).toBeNull();
    // ok-1 computed once: ten junk answers did not clear it out.
    expect(calls.filter((s) => s === "ok-1")).toHaveLength(1);
    expect(calls.filter((s) => s === "junk0")).toHaveLength(2);
  });

  it("answers a new copy of the last input from memory, and never takes a refused answer for the last one", () => {
    const calls: string[] = [];
    const check = memoize(
      (s: string) => {
        calls.push(s);
        return s.startsWith("ok") ? s.length : null;
      },
      { keep: (value) => value !== null },
    );
    const parts = ["ok", "-", "key"];
    // Each call's key is a new string (as a parsed request body makes it): equal text is one answer.
    for (let i = 0; i < 3; i++) expect(check(parts.join(""))).toBe(6);
    expect(calls).toEqual(["ok-key"]);
    expect([check("junk"), check("junk")]).toEqual([null, null]);
    expect(check("ok-key")).toBe(6);
    expect(calls).toEqual(["ok-key", "junk", "junk"]);
  });

  it("a remembered user-agent hash is the same bytes as a fresh one", () => {
    const ua = "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0";
    const fresh = createHash("sha256").update(ua, "utf8").digest().subarray(0, 16);
    expect(uaHashBytes(ua).equals(fresh)).toBe(true);
    expect(uaHashBytes(ua).equals(fresh)).toBe(true);
  });
});
