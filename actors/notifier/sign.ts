import { createHmac } from "node:crypto";

/**
 * The webhook signature (docs/findings.md): `X-Signature: sha256=<hex>` where hex is
 * HMAC-SHA256, keyed with the webhook's secret, over `<X-Timestamp>.<raw body>`. The
 * timestamp (Unix seconds) is signed too so a captured request cannot be replayed later.
 */
export function signWebhook(secret: string, timestampS: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestampS}.${body}`).digest("hex")}`;
}

/**
 * The same secret in the Standard Webhooks form (standardwebhooks.com): `whsec_` and the
 * base64 of the key bytes. The key bytes are the UTF-8 bytes of the secret the operator
 * gave, so both signatures use one key and one secret serves both kinds of receiver.
 */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, "utf8").toString("base64")}`;
}

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256, keyed with the
 * secret's bytes, over `<webhook-id>.<webhook-timestamp>.<raw body>`.
 */
export function signStandardWebhook(secret: string, id: string, timestampS: number, body: string): string {
  return `v1,${createHmac("sha256", Buffer.from(secret, "utf8")).update(`${id}.${timestampS}.${body}`).digest("base64")}`;
}

export function webhookHeaders(input: {
  secret: string;
  timestampS: number;
  body: string;
  deliveryId: string;
  eventType: string;
}): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "access-gateway-webhooks/1.0",
    "x-timestamp": String(input.timestampS),
    "x-signature": signWebhook(input.secret, input.timestampS, input.body),
    "x-delivery-id": input.deliveryId,
    "x-event-type": input.eventType,
    "webhook-id": input.deliveryId,
    "webhook-timestamp": String(input.timestampS),
    "webhook-signature": signStandardWebhook(input.secret, input.deliveryId, input.timestampS, input.body),
  };
}
