import { fromHex, subtle, utf8 } from "./encoding.js";

/**
 * The check of a verify answer (interface.md 5.3): HMAC-SHA256 keyed with the API key
 * over `ts.keyId.1.domain[.nonce]`, compared in constant time, and `|now − ts| ≤ expires_in`.
 * The comparison is WebCrypto's own `verify` (native, constant time in Node and in
 * browsers) rather than a JavaScript loop over two strings.
 */

/** Answers are fresh 120 s (interface.md section 8); a larger `expires_in` is not believed. */
export const MAX_EXPIRES_IN_S = 120;

type HmacKey = Awaited<ReturnType<ReturnType<typeof subtle>["importKey"]>>;

export function verifyMessage(ts: number, keyId: number, domain: string, nonce: string | undefined): string {
  return nonce ? `${ts}.${keyId}.1.${domain}.${nonce}` : `${ts}.${keyId}.1.${domain}`;
}

export function createSignatureChecker(): (apiKey: string, message: string, signature: unknown) => Promise<boolean> {
  const keys = new Map<string, Promise<HmacKey>>();
  return async (apiKey, message, signature) => {
    if (typeof signature !== "string") return false;
    const mac = fromHex(signature);
    if (mac === null || mac.length !== 32) return false;
    let key = keys.get(apiKey);
    if (!key) {
      key = subtle().importKey("raw", utf8(apiKey), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
      if (keys.size > 100) keys.clear();
      keys.set(apiKey, key);
    }
    return subtle().verify("HMAC", await key, mac, utf8(message));
  };
}

export type Freshness = "fresh" | "stale";

export function freshness(ts: unknown, expiresIn: unknown, nowS: number): Freshness {
  if (typeof ts !== "number" || !Number.isInteger(ts)) return "stale";
  const window = typeof expiresIn === "number" && expiresIn > 0 ? Math.min(expiresIn, MAX_EXPIRES_IN_S) : MAX_EXPIRES_IN_S;
  return Math.abs(nowS - ts) <= window ? "fresh" : "stale";
}
