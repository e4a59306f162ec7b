import { createHmac } from "node:crypto";

/**
 * The webhook signature (docs/findings.md): `X-Signature: sha256=<hex>` where hex is
 * HMAC-SHA256, keyed with the webhook's secret, over `<X-Timestamp>.<raw body>`. The
 * timestamp (Unix seconds) is signed too so a captured request cannot be replayed later.
 */
export function signWebhook(secret: string, timestampS: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestampS}.${body}`).digest("hex")}`;
}

export function webhookHeaders(input: { secret: string; timestampS: number; body: string; deliveryId: string; eventType: string }): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "access-gateway-webhooks/1.0",
    "x-timestamp": String(input.timestampS),
    "x-signature": signWebhook(input.secret, input.timestampS, input.body),
    "x-delivery-id": input.deliveryId,
    "x-event-type": input.eventType,
  };
}
