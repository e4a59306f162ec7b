import { describe, expect, it } from "vitest";
import { DELIVERY_POLICY, outcomeOf } from "../../../actors/notifier/deliveries.js";
import { signWebhook } from "../../../actors/notifier/sign.js";
import { recipientsOf } from "../../../actors/notifier/messages.js";

const created = new Date(Date.UTC(2030, 0, 1));
const at = (ms: number) => created.getTime() + ms;

describe("webhook retry policy", () => {
  it("delivers on 2xx", () => {
    expect(outcomeOf({ status: 204 }, { attempts: 1, created_at: created }, at(0), DELIVERY_POLICY)).toEqual({
      kind: "delivered",
      status: 204,
    });
  });

  it("retries 5xx, 408, 429 and no answer with a doubling backoff capped at an hour", () => {
    for (const result of [{ status: 500 }, { status: 503 }, { status: 408 }, { status: 429 }, { error: "ECONNREFUSED", refused: false }]) {
      expect(outcomeOf(result, { attempts: 1, created_at: created }, at(0), DELIVERY_POLICY)).toMatchObject({
        kind: "retry",
        nextAttemptMs: at(30_000),
      });
    }
    expect(outcomeOf({ status: 500 }, { attempts: 3, created_at: created }, at(0), DELIVERY_POLICY)).toMatchObject({
      nextAttemptMs: at(120_000),
    });
    expect(outcomeOf({ status: 500 }, { attempts: 12, created_at: created }, at(0), DELIVERY_POLICY)).toMatchObject({
      nextAttemptMs: at(3_600_000),
    });
  });

  it("gives up after 24 hours, and at once on any other answer or a URL it cannot send to", () => {
    const late = outcomeOf({ status: 500 }, { attempts: 30, created_at: created }, at(24 * 3_600_000 - 60_000), DELIVERY_POLICY);
    expect(late).toMatchObject({ kind: "failed", status: 500 });
    for (const result of [
      { status: 400 },
      { status: 404 },
      { status: 410 },
      { status: 301 },
      // An SSRF refusal is not one (post.ts): retried like a name that does not resolve, so the two look alike.
      { error: "unsupported scheme ftp:", refused: true },
    ]) {
      expect(outcomeOf(result, { attempts: 1, created_at: created }, at(0), DELIVERY_POLICY).kind).toBe("failed");
    }
  });
});

describe("webhook signature and e-mail recipients", () => {
  it("signs timestamp.body with HMAC-SHA256", () => {
    // Reference value computed independently: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    expect(signWebhook("secret", 1_700_000_000, '{"a":1}')).toBe("sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686");
  });

  it("mails the new and the previous owner on an assignment, the owner otherwise, nobody for risks", () => {
    const base = {
      id: 1,
      time: "2030-01-01T00:00:00Z",
      domain: "a.test",
      finding_key: "email:spf",
      finding: "SPF",
      status: "open",
      due_at: null,
    };
    const assigned = { ...base, type: "finding.assigned" as const, by: "ops", automatic: false };
    const risk = { note: "", acked_at: null, expires_at: null };
    expect(
      recipientsOf({ ...assigned, owner: { name: "A", email: "a@x.test" }, previous_owner: { name: "B", email: "b@x.test" } }).map(
        (p) => p.email,
      ),
    ).toEqual(["a@x.test", "b@x.test"]);
    expect(recipientsOf({ ...assigned, owner: null, previous_owner: { name: "B", email: "b@x.test" } }).map((p) => p.email)).toEqual([
      "b@x.test",
    ]);
    expect(
      recipientsOf({ ...base, type: "finding.overdue", owner: { name: "A", email: "a@x.test" }, days_overdue: 1 }).map((p) => p.email),
    ).toEqual(["a@x.test"]);
    expect(recipientsOf({ ...base, ...risk, type: "risk.expired", owner: { name: "A", email: "a@x.test" } })).toEqual([]);
  });
});
