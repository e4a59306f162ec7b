import { hmacHex } from "../../../shared/platform/crypto/hash.js";
import { VERIFY_HEADERS } from "../verify/answer.js";
import type { HttpReply } from "../../types.js";

/**
 * The content answer (interface.md 2.3, 4.3) is written as a string, because its
 * signature covers the exact JSON text of `content` as it appears in the body
 * (docs/content.md says how a client checks it): the route signs the very substring it
 * embeds, so no client has to reproduce a serializer. The `attestation` (last) digests the
 * same substring.
 */

const SUCCESS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...VERIFY_HEADERS, "content-type": "application/json" });

/** One content snapshot entry as the projector stores it. */
interface StoredItem {
  type: string;
  value: unknown;
  /** Clock milliseconds. */
  updated_at: number;
}

/** `YYYY-MM-DDTHH:MM:SSZ`, UTC, like the admin API's times. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** One item: `{"type":…,"value":…,"updated_at":"…"}`; json values stay JSON. */
function itemJson(raw: string): string {
  const item = JSON.parse(raw) as StoredItem;
  return `{"type":${JSON.stringify(item.type)},"value":${JSON.stringify(item.value ?? null)},"updated_at":"${isoSeconds(item.updated_at)}"}`;
}

const INDEX = /^(?:0|[1-9]\d{0,9})$/;

/** A key JavaScript orders first, numerically: a canonical array index (below 2^32 - 1). */
function arrayIndex(key: string): number | null {
  if (!INDEX.test(key)) return null;
  const n = Number(key);
  return n < 4_294_967_295 ? n : null;
}

/**
 * Keys in the order a JavaScript object keeps them once parsed: array-index keys
 * ("7", "10") ascending by value, then every other key ascending by code unit (content
 * keys are ASCII). So `JSON.stringify(JSON.parse(body).content)` gives back the signed
 * text in JavaScript, and a parser that keeps document order does too.
 */
function jsOrder(a: string, b: string): number {
  const ia = arrayIndex(a);
  const ib = arrayIndex(b);
  if (ia !== null || ib !== null) return ia === null ? 1 : ib === null ? -1 : ia - ib;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `content` object, no whitespace. `entries` are (content_key, stored JSON) pairs in any order. */
export function contentJson(entries: readonly (readonly [string, string])[]): string {
  const sorted = [...entries].sort(([a], [b]) => jsOrder(a, b));
  return `{${sorted.map(([key, raw]) => `${JSON.stringify(key)}:${itemJson(raw)}`).join(",")}}`;
}

/** interface.md 5.3: HMAC-SHA256 keyed with the API key over `ts.domain.content`, hex. */
export function contentSignature(apiKey: string, ts: number, domain: string, content: string): string {
  return hmacHex(apiKey, `${ts}.${domain}.${content}`);
}

/** Field order: ok, domain, content, ts, signature, latency_ms, attestation (a JWS: base64url and dots). */
export function contentReply(s: {
  apiKey: string;
  domain: string;
  content: string;
  ts: number;
  latencyMs: number;
  attestation: string;
}): HttpReply {
  const signature = contentSignature(s.apiKey, s.ts, s.domain, s.content);
  const body = `{"ok":true,"domain":${JSON.stringify(s.domain)},"content":${s.content},"ts":${s.ts},"signature":"${signature}","latency_ms":${s.latencyMs},"attestation":"${s.attestation}"}`;
  return { status: 200, headers: SUCCESS_HEADERS as Record<string, string>, body };
}
