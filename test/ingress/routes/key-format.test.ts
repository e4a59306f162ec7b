import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomToken, sha256 } from "../../../shared/platform/crypto/hash.js";
import { issueKey, KEY_PATTERNS } from "../../../shared/platform/crypto/key-format.js";
import { insertKey } from "../../../shared/verify/db/keys.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, makeKey, verify } from "./verify-fixtures.js";

/**
 * Checksummed keys (docs/verify.md, "Key format"): a key with one character changed is
 * refused `invalid_key` before any snapshot or Redis lookup. The proof is this ingress's
 * own counters of the Redis work verify does (counting-script runs and snapshot loads, on
 * /metrics): other test files run their own gateways, so nothing else moves them.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("keyformat");
});
afterAll(async () => {
  await gw?.stop();
});

/** Counting-script runs plus snapshot loads: every Redis round trip of the enforcement path. */
async function redisRoundTrips(): Promise<number> {
  const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
  let total = 0;
  for (const name of ["gateway_verify_script_runs_total", "gateway_snapshot_loads_total"]) {
    const line = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
    expect(line, name).not.toBeNull();
    total += Number(line?.[1]);
  }
  return total;
}

/** The key with the character at `position` replaced by another of the key alphabet. */
function typo(key: string, position: number): string {
  const replacement = key[position] === "A" ? "B" : "A";
  return key.slice(0, position) + replacement + key.slice(position + 1);
}

describe("checksummed keys", () => {
  it("new client and server keys have the documented format and work", async () => {
    const made = await clientSetup(gw);
    expect(made.key).toMatch(KEY_PATTERNS.client);
    expect(made.details.prefix).toBe(made.key.slice(0, 12));
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    const server = await makeKey(gw, made.orgId, { name: "Backend", kind: "server", domain: undefined });
    expect(server.key).toMatch(KEY_PATTERNS.server);
    expect((await verify(gw, { key: server.key })).body.reason).toBe("ok");
  });

  it("a key with one character changed is refused invalid_key with no Redis round trip, on every key-gated endpoint", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    for (const position of [9, 20, made.key.length - 6, made.key.length - 1]) {
      const wrong = typo(made.key, position);
      const before = await redisRoundTrips();
      const answer = await verify(gw, { key: wrong, domain: "example.com" });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ authorized: false, reason: "invalid_key" });
      expect(answer.body).not.toHaveProperty("key");
      const content = await gw.call("/api/v1/content.php", { query: { key: wrong, domain: "example.com" } });
      expect(content.body).toMatchObject({ ok: false, reason: "invalid_key" });
      expect(await redisRoundTrips(), `position ${position}`).toBe(before);
    }
  });

  it("the marker changed into a letter makes the shape of an old key: that one typo is refused by the lookup", async () => {
    const made = await clientSetup(gw);
    const before = await redisRoundTrips();
    expect((await verify(gw, { key: typo(made.key, 8), domain: "example.com" })).body.reason).toBe("invalid_key");
    expect(await redisRoundTrips()).toBeGreaterThan(before);
  });

  it("a well-formed key that was never issued is looked up (the counters do move), and refused", async () => {
    const stranger = issueKey("client", true).key;
    const before = await redisRoundTrips();
    expect((await verify(gw, { key: stranger, domain: "example.com" })).body.reason).toBe("invalid_key");
    expect(await redisRoundTrips()).toBeGreaterThan(before);
  });

  it("keys issued before the checksum keep working, and their typos are refused by the lookup as before", async () => {
    const made = await clientSetup(gw);
    const legacy = `ak_live_${randomToken(32)}`;
    const nowMs = gw.ctx.clock.now();
    const row = await transaction(gw.ctx.db, (tx) =>
      insertKey(tx, {
        orgId: made.orgId,
        hash: sha256(legacy),
        prefix: legacy.slice(0, 12),
        kind: "client",
        nowMs,
        settings: {
          name: "Old",
          domain: "example.com",
          environment: "production",
          industry: "",
          scopes: [],
          ip_allow: [],
          ip_deny: [],
          ip_binding: false,
          countries_allow: [],
          countries_block: [],
          rate_per_minute: 600,
          rate_per_source_per_minute: null,
          is_trial: false,
          expires_at: null,
          botcheck: { enabled: false, hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true, blocked_url: null },
          firewall: null,
          content_origin: null,
        },
      }),
    );
    await gw.ingress.deps.projector.keyChanged(row.id);
    expect(legacy).toMatch(KEY_PATTERNS.legacyClient);
    expect((await verify(gw, { key: legacy, domain: "example.com" })).body.reason).toBe("ok");
    const before = await redisRoundTrips();
    expect((await verify(gw, { key: typo(legacy, 20), domain: "example.com" })).body.reason).toBe("invalid_key");
    expect(await redisRoundTrips()).toBeGreaterThan(before);
  });

  it("a string no format ever issued is refused without a lookup", async () => {
    const before = await redisRoundTrips();
    for (const key of ["hello", "gwt_abc", "AK_LIVE_abc"]) {
      expect((await verify(gw, { key, domain: "example.com" })).body.reason).toBe("invalid_key");
    }
    expect(await redisRoundTrips()).toBe(before);
  });
});
