import { describe, expect, it } from "vitest";
import { ajv } from "../../../shared/platform/validation.js";
import {
  PUBLIC_PARAMETERS,
  activityParams,
  assignmentsParams,
  botcheckParams,
  contentParams,
  eventsParams,
  scanParams,
  secretParams,
  verifyParams,
  type ParamsCheck,
} from "../../../ingress/routes/schemas.js";

/**
 * The parameter checks answer what their JSON schema answers: the quick path (lengths in
 * UTF-16 units) may only pass what ajv passes, and must leave to ajv what it cannot tell.
 */

const CHECKS: Record<keyof typeof PUBLIC_PARAMETERS, ParamsCheck> = {
  verify: verifyParams,
  content: contentParams,
  secret: secretParams,
  botcheck: botcheckParams,
  scan: scanParams,
  assignments: assignmentsParams,
  activity: activityParams,
  events: eventsParams,
};

/** A deterministic generator (xorshift), so a failure repeats. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function valueOf(next: () => number, bound: number): unknown {
  const pick = Math.floor(next() * 9);
  // Around the bound, in plain characters and in surrogate pairs (two units, one code point).
  const around = Math.max(0, bound + Math.floor(next() * 5) - 2);
  switch (pick) {
    case 0:
      return "a".repeat(around);
    case 1:
      return "😀".repeat(Math.ceil(around / 2) + Math.floor(next() * 3) - 1);
    case 2:
      return "😀".repeat(around);
    case 3:
      return next() < 0.5 ? 42 : Number.POSITIVE_INFINITY;
    case 4:
      return next() < 0.5;
    case 5:
      return null;
    case 6:
      return { nested: "x" };
    case 7:
      return ["x"];
    default:
      return "short";
  }
}

describe("public parameter checks", () => {
  it("agree with their JSON schema on values around every bound", () => {
    const next = random(0x9e3779b9);
    for (const [endpoint, check] of Object.entries(CHECKS)) {
      const strict = ajv.compile(check.schema);
      const properties = Object.entries(check.schema.properties);
      for (let round = 0; round < 400; round++) {
        const params: Record<string, unknown> = { extra: "ignored" };
        for (const [name, property] of properties) {
          if (next() < 0.4) continue;
          const bound = (property as { maxLength?: number }).maxLength ?? 16;
          params[name] = valueOf(next, bound);
        }
        expect(
          check(params),
          `${endpoint} ${JSON.stringify(params, (_name, v) => (typeof v === "string" && v.length > 20 ? `${v.slice(0, 4)}…(${v.length} units, ${[...v].length} points)` : v))}`,
        ).toBe(strict(params) === true);
      }
    }
  });

  it("pass a value whose code points fit though its UTF-16 units do not", () => {
    // 200 emoji: 400 UTF-16 units, 200 code points, under nonce's bound of 256.
    expect(verifyParams({ key: "k", nonce: "😀".repeat(200) })).toBe(true);
    expect(verifyParams({ key: "k", nonce: "😀".repeat(257) })).toBe(false);
    expect(verifyParams({ key: "k", nonce: "a".repeat(257) })).toBe(false);
    expect(verifyParams({ key: "k", nonce: null })).toBe(false);
    // JSON.parse reads 1e999 as Infinity: ajv refuses it, and so does the quick path.
    expect(verifyParams(JSON.parse('{"key":"k","nonce":1e999}'))).toBe(false);
  });
});
