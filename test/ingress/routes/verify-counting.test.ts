import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARDS } from "../../../shared/platform/redis/keys.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, makeKey, usedOf, verify } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("verifycounting");
});
afterAll(async () => {
  await gw?.stop();
});

const ok = (made: { key: string }, extra: Record<string, unknown> = {}) => verify(gw, { key: made.key, domain: "example.com", ...extra });

async function concurrently(n: number, call: () => Promise<{ body: { reason: string } }>): Promise<Record<string, number>> {
  const answers = await Promise.all(Array.from({ length: n }, call));
  const tally: Record<string, number> = {};
  for (const a of answers) tally[a.body.reason] = (tally[a.body.reason] ?? 0) + 1;
  return tally;
}

describe("counting against the allowance (interface.md section 8)", () => {
  it("counts answered calls and refusals that count; not the excluded refusals", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 2 });
    expect((await ok(made)).body.reason).toBe("ok");
    expect(await usedOf(gw, made.orgId)).toBe(1);
    expect((await ok(made, { domain: "elsewhere.org" })).body.reason).toBe("domain_mismatch");
    expect(await usedOf(gw, made.orgId)).toBe(2);
    expect((await ok(made, { scope: "x" })).body.reason).toBe("ok");
    expect(await usedOf(gw, made.orgId)).toBe(3);
    // Excluded: rate_limited (the key's window is full) ...
    expect((await ok(made)).body.reason).toBe("rate_limited");
    expect(await usedOf(gw, made.orgId)).toBe(3);
    // (a wrong-place refusal takes a slot of its own window, not the key's: docs/security.md)
    expect((await ok(made, { domain: "elsewhere.org" })).body.reason).toBe("domain_mismatch");
    expect((await ok(made, { domain: "elsewhere.org" })).body.reason).toBe("rate_limited");
    expect(await usedOf(gw, made.orgId)).toBe(4);
    // ... and key_suspended.
    await gw.admin("POST", `/keys/${made.id}/suspend`);
    expect((await ok(made)).body.reason).toBe("key_suspended");
    expect(await usedOf(gw, made.orgId)).toBe(4);
  });

  it("an unknown key counts against nobody", async () => {
    const made = await clientSetup(gw);
    await ok(made);
    const before = await usedOf(gw, made.orgId);
    const unknown = await verify(gw, { key: `${made.key}x`, domain: "example.com" });
    expect(unknown.body.reason).toBe("invalid_key");
    expect(await usedOf(gw, made.orgId)).toBe(before);
    const streams = await Promise.all(Array.from({ length: SHARDS }, (_, s) => gw.ctx.redis.xlen(gw.ctx.keys.usageStream(s))));
    const total = streams.reduce((a, b) => a + b, 0);
    await verify(gw, { key: "ak_live_neverissued", domain: "example.com" });
    const after = await Promise.all(Array.from({ length: SHARDS }, (_, s) => gw.ctx.redis.xlen(gw.ctx.keys.usageStream(s))));
    expect(after.reduce((a, b) => a + b, 0)).toBe(total);
  });

  it("pools the allowance across the organization's keys", async () => {
    const first = await clientSetup(gw);
    const second = await makeKey(gw, first.orgId, { name: "Second" });
    await ok(first);
    await ok(second);
    await ok(second, { domain: "nope.org" });
    expect(await usedOf(gw, first.orgId)).toBe(3);
  });

  it("stops at exactly the allowance under concurrency, and refusals past it are not counted", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 100_000 }, { plan: "free" });
    const tally = await concurrently(1100, () => ok(made));
    expect(tally).toEqual({ ok: 1000, usage_limit_exceeded: 100 });
    expect(await usedOf(gw, made.orgId)).toBe(1000);
    // A refusal that would count is answered usage_limit_exceeded once the allowance is spent.
    expect((await ok(made, { domain: "nope.org" })).body.reason).toBe("usage_limit_exceeded");
    expect(await usedOf(gw, made.orgId)).toBe(1000);
  });

  it("N concurrent calls give exactly N counted", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 100_000 });
    const tally = await concurrently(500, () => ok(made));
    expect(tally).toEqual({ ok: 500 });
    expect(await usedOf(gw, made.orgId)).toBe(500);
  });

  it("rate_per_minute = R lets exactly R through in a minute, then clears", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 25 });
    // Start at the top of a minute so the burst stays inside one window.
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    await advance(gw, 60 - (now % 60));
    const tally = await concurrently(40, () => ok(made));
    expect(tally).toEqual({ ok: 25, rate_limited: 15 });
    expect(await usedOf(gw, made.orgId)).toBe(25);
    await advance(gw, 60);
    expect((await ok(made)).body.reason).toBe("ok");
  });

  it("resets on the next cycle", async () => {
    const made = await clientSetup(gw, {}, { plan: "free" });
    const snapshot = JSON.parse((await gw.ctx.redis.hget(gw.ctx.keys.orgSnapshot(made.orgId), "json")) ?? "{}");
    await gw.ctx.redis.set(gw.ctx.keys.cycleUsed(made.orgId, snapshot.cycle_anchor_ms), 1000);
    expect((await ok(made)).body.reason).toBe("usage_limit_exceeded");
    await advance(gw, 30 * 86400 + 1);
    expect((await ok(made)).body.reason).toBe("ok");
    expect(await usedOf(gw, made.orgId)).toBe(1);
  });
});
