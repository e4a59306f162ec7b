/**
 * A webhook delivery that fails before its request is sent (its secret does not unseal) is
 * an attempt like any other: recorded, retried with backoff, given up after the retry period.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_POLICY, type DeliveryLoop, PREPARE_FAILED, startDeliveryLoop } from "../../../actors/notifier/deliveries.js";
import { insertOrg } from "../../../shared/accounts/db/orgs.js";
import { deliveriesOf, enqueueDeliveries, insertWebhook, nextWebhookId } from "../../../shared/events/index.js";
import { manualClock } from "../../../shared/platform/clock.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { createTestDatabase } from "../../helpers/database.js";
import { waitFor } from "../../helpers/gateway.js";

const NOW = Date.UTC(2030, 0, 1, 12);
const policy = { ...DELIVERY_POLICY, timeoutMs: 1_000, backoffBaseMs: 60_000, backoffMaxMs: 60_000, retryPeriodMs: 150_000, pollMs: 20 };

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let loop: DeliveryLoop | null = null;
let webhookId: number;
const clock = manualClock(NOW);

beforeAll(async () => {
  db = await createTestDatabase("deliveries");
  const org = await insertOrg(db.pool, { name: "o", plan: "professional", fixTargetDays: 30, subscription: "active", nowMs: NOW });
  const orgId = Number(org.id);
  webhookId = await nextWebhookId(db.pool);
  // Sealed under another master secret (or damaged): unseal throws before any request is made.
  await insertWebhook(db.pool, { id: webhookId, orgId, url: "http://127.0.0.1:9/hook", secretSealed: randomBytes(60), nowMs: NOW });
  await enqueueDeliveries(db.pool, { orgId, eventId: 1, eventType: "scan.completed", bodyFor: () => "{}", nowMs: NOW });
});
afterAll(async () => {
  await loop?.stop();
  await db?.drop();
});

const delivery = async () => (await deliveriesOf(db.pool, webhookId, 10))[0];

describe("a delivery that cannot be sent", () => {
  it("is recorded as a failed attempt, retried after the backoff and given up after the retry period", async () => {
    loop = startDeliveryLoop(
      { db: db.pool, clock, logger: silentLogger(), masterSecret: randomBytes(32) },
      { outbound: outboundPolicy("webhook", "none"), resolver: null, caPem: null },
      policy,
    );
    const first = await waitFor(async () => {
      const row = await delivery();
      return row.last_error !== null ? row : null;
    });
    expect(first).toMatchObject({ status: "pending", attempts: 1, last_error: PREPARE_FAILED });
    // The backoff, not the 25 s lease: claimed again only after a minute.
    expect(first.next_attempt_at.getTime()).toBe(NOW + 60_000);

    clock.advance(60_000);
    // Recorded (not only claimed) before the clock moves on: the backoff after the second attempt.
    await waitFor(async () => (await delivery()).next_attempt_at.getTime() === NOW + 120_000);
    clock.advance(60_000);
    // The third attempt would come after the retry period: the delivery is given up.
    const last = await waitFor(async () => {
      const row = await delivery();
      return row.status === "failed" ? row : null;
    });
    expect(last.attempts).toBe(3);
    expect(last.last_error).toContain(PREPARE_FAILED);
    expect(last.last_error).toContain("gave up after 3 attempts");
  });
});
