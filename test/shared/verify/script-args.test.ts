import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBatch, type CountingCall } from "../../../shared/verify/batch.js";
import { createKeys } from "../../../shared/platform/redis/keys.js";
import { loadScript } from "../../../shared/platform/redis/scripts.js";
import { luaLocals, VERIFY_BATCH_ARGS } from "../../../shared/platform/redis/script-args.js";

/**
 * The counting script's arguments are named once (script-args.ts): the batcher writes them
 * by name and the script reads them by the same names. Round trip: a batch encoded by
 * encodeBatch, read back on Redis by Lua that walks ARGV with the layout's locals exactly
 * as verify-batch-n.lua does, gives every call's fields back.
 */

const keys = createKeys("t:args:");
const NOW = Date.UTC(2030, 0, 15, 12, 0, 30);
let redis: Redis;

beforeAll(() => {
  redis = new Redis("redis://127.0.0.1:6379");
});
afterAll(() => {
  redis.disconnect();
});

// Per call, in the order the script answers: the group's fields, then the shape's.
const DECODER = `${luaLocals(VERIFY_BATCH_ARGS)}
local out = { ARGV[ARG_NOW], ARGV[ARG_DAY], ARGV[ARG_MAXLEN], ARGV[ARG_OTHER_LABEL], ARGV[ARG_PENDING_CAP], ARGV[ARG_LABEL_CAP] }
local function key(i) if tonumber(i) == 0 then return '' end return KEYS[tonumber(i)] end
local a = HEAD_FIELDS
for _ = 1, tonumber(ARGV[ARG_GROUPS]) do
  local g = a
  local shapes = tonumber(ARGV[g + G_SHAPES])
  a = a + GROUP_FIELDS
  for _ = 1, shapes do
    for _ = 1, tonumber(ARGV[a + S_CALLS]) do
      out[#out + 1] = table.concat({
        key(ARGV[g + G_KEY_SNAPSHOT]), key(ARGV[g + G_ORG_SNAPSHOT]), key(ARGV[g + G_CYCLE_USED]), key(ARGV[g + G_INSTALLATIONS]),
        ARGV[g + G_KEY_VERSION], ARGV[g + G_ORG_VERSION], ARGV[g + G_RATE], ARGV[g + G_PER_SOURCE], ARGV[g + G_ALLOWANCE],
        ARGV[g + G_ORG], ARGV[g + G_KEY], ARGV[g + G_ENDPOINT], ARGV[g + G_CYCLE_START], key(ARGV[g + G_LABELS]),
        key(ARGV[g + G_PENDING_INSTALLS]), key(ARGV[g + G_SIGHTINGS]),
        ARGV[a + S_OUTCOME], ARGV[a + S_COUNTS], ARGV[a + S_INSTALL], key(ARGV[a + S_WINDOW]), key(ARGV[a + S_SOURCE_WINDOW]),
      }, '|')
    end
    a = a + SHAPE_FIELDS
  end
end
return out`;

function call(overrides: Partial<CountingCall>): CountingCall {
  return {
    orgId: 7,
    keyId: 70,
    keyVersion: "kv1",
    orgVersion: "ov1",
    outcome: "ok",
    counts: true,
    ratePerMinute: 1000,
    allowance: null,
    install: "",
    endpoint: "verify",
    nowMs: NOW,
    cycleStartMs: NOW - 1000,
    ...overrides,
  };
}

/** What the script must read for one call, in the decoder's order. */
function expected(c: CountingCall): string {
  const minute = Math.floor(c.nowMs / 60_000);
  const day = new Date(NOW).toISOString().slice(0, 10);
  const refused = c.outcome !== "ok";
  return [
    keys.keySnapshot(c.orgId, c.keyId),
    keys.orgSnapshot(c.orgId),
    keys.cycleUsed(c.orgId, c.cycleStartMs),
    keys.installations(c.orgId, c.keyId),
    c.keyVersion,
    c.orgVersion,
    String(c.ratePerMinute),
    String(c.ratePerSource ?? -1),
    String(c.allowance ?? -1),
    String(c.orgId),
    String(c.keyId),
    c.endpoint,
    String(c.cycleStartMs),
    c.endpoint === "verify" ? "" : keys.endpointLabels(c.orgId, c.keyId, day),
    keys.pendingInstalls(c.orgId, c.keyId, day),
    c.install === "" && c.keyId === 70 ? "" : keys.installSightings(c.orgId, c.keyId, minute),
    c.outcome,
    c.counts ? "1" : "0",
    c.install,
    refused ? keys.refusalWindow(c.orgId, c.keyId, minute) : keys.rateWindow(c.orgId, c.keyId, minute),
    c.source ? keys.sourceWindow(c.orgId, c.keyId, minute, c.source) : "",
  ].join("|");
}

describe("verify-batch-n.lua arguments", () => {
  it("round-trip: every field the batcher writes is read back under its name", async () => {
    const calls = [
      call({}),
      call({ outcome: "domain_mismatch" }),
      call({}),
      call({ keyId: 71, install: "site-a", ratePerSource: 5, source: "s1", allowance: 500, endpoint: "checkout" }),
      call({
        keyId: 71,
        install: "site-b",
        ratePerSource: 5,
        source: "s2",
        allowance: 500,
        endpoint: "checkout",
        outcome: "key_suspended",
        counts: false,
      }),
      call({ orgId: 8, keyId: 80, keyVersion: "kv9", orgVersion: "ov9", install: "(unnamed)" }),
    ];
    const encoded = encodeBatch(
      keys,
      0,
      NOW,
      "1234",
      calls.map((c) => ({ call: c })),
    );
    const decoded = (await redis.eval(DECODER, encoded.keys.length, ...encoded.keys, ...encoded.args)) as string[];
    expect(decoded.slice(0, 6)).toEqual([
      String(NOW),
      new Date(NOW).toISOString().slice(0, 10),
      "1234",
      "(other)",
      expect.any(String),
      expect.any(String),
    ]);
    expect(decoded.slice(6)).toEqual(encoded.order.map((p) => expected(p.call)));
    expect(new Set(encoded.order.map((p) => p.call))).toEqual(new Set(calls));
    expect(encoded.order).toHaveLength(calls.length);
  });

  it("the script reads its arguments by name only, and gets the layout as Lua locals", () => {
    const { source } = loadScript("verify-batch-n.lua");
    expect(source).not.toMatch(/^--@layout$/m);
    expect(source).toContain(luaLocals(VERIFY_BATCH_ARGS));
    const body = source.slice(source.indexOf(luaLocals(VERIFY_BATCH_ARGS)) + luaLocals(VERIFY_BATCH_ARGS).length);
    expect(body).not.toMatch(/ARGV\[\s*\d|ARGV\[a \+ \d/);
    for (const name of Object.keys(VERIFY_BATCH_ARGS)) expect(body, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
