import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createChallengeWriter } from "../../../ingress/routes/botcheck/challenges.js";
import { createRedis } from "../../../shared/platform/redis/client.js";
import { cleanRedis } from "../../helpers/gateway.js";

const prefix = `challenges-test:${randomBytes(4).toString("hex")}:`;
const redis = createRedis("redis://127.0.0.1:6379", "challenges-test");

afterAll(async () => {
  await cleanRedis(prefix);
  redis.disconnect();
});

describe("the challenge writer (one pipeline per event-loop turn)", () => {
  it("answers each SET NX of a turn on its own: stored, or not when the nonce exists, with its expiry", async () => {
    const write = createChallengeWriter(redis);
    await redis.set(`${prefix}taken`, "earlier");
    const answers = await Promise.all([
      write(`${prefix}a`, "record a", 120),
      write(`${prefix}taken`, "record taken", 120),
      write(`${prefix}b`, "record b", 60),
      write(`${prefix}a`, "again", 120),
    ]);
    expect(answers).toEqual([true, false, true, false]);
    expect(await redis.get(`${prefix}a`)).toBe("record a");
    expect(await redis.get(`${prefix}taken`)).toBe("earlier");
    expect(await redis.ttl(`${prefix}a`)).toBeGreaterThan(110);
    const ttlB = await redis.ttl(`${prefix}b`);
    expect(ttlB).toBeGreaterThan(50);
    expect(ttlB).toBeLessThanOrEqual(60);
    expect(await write(`${prefix}c`, "alone", 120)).toBe(true);
  });

  it("rejects every waiting SET when Redis refuses them", async () => {
    const closed = createRedis("redis://127.0.0.1:6379", "challenges-test-closed");
    await closed.quit();
    const write = createChallengeWriter(closed);
    const results = await Promise.allSettled([write(`${prefix}x`, "x", 120), write(`${prefix}y`, "y", 120)]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(await redis.exists(`${prefix}x`, `${prefix}y`)).toBe(0);
  });
});
