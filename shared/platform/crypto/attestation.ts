import { createHash } from "node:crypto";
import { signToken, type SigningKey } from "./entitlement.js";

/**
 * The `attestation` of content.php and secret.php answers (docs/content.md, docs/secret.md):
 * a JWS signed with the entitlement's Ed25519 key (same header, same `kid`, keys.json) over
 * what the answer says. The contract's `signature` is an HMAC keyed with the API key, which
 * a client key cannot keep secret, so it cannot show who wrote the answer; this can.
 *
 * Signing costs tens of microseconds, so a content attestation is reused for an identical
 * payload (same key and org ids and snapshot versions, host, content key asked for and
 * content digest) for up to ATTESTATION_REUSE_S, like the entitlement
 * (shared/verify/entitlements.ts). A secret answer with a nonce is signed per call: the
 * nonce is in the payload.
 */

/** Validity of an attestation: the freshness of a verify answer (interface.md section 8). */
export const ATTESTATION_TTL_S = 120;
/** A signed attestation is reused this long, so it always has at least 60 s of validity left. */
export const ATTESTATION_REUSE_S = 60;
/** Characters of cache keys and tokens held per process before the cache is emptied (~8 MB). */
const MAX_CACHED_CHARS = 8_000_000;

/** A content answer: `sha` is SHA-256 hex of the `content` JSON text exactly as in the body. */
export interface ContentAttestation {
  typ: "content";
  iss: string;
  key: number;
  org: number;
  /** The host the answer's `domain` names (attestedHost, shared/client/attestation.ts; "" when none was sent). */
  dom: string;
  /**
   * The `content_key` asked for, or null when the call asked for every value: without it an
   * answer for one key (or for all) could be served in place of another request's.
   */
  ck: string | null;
  sha: string;
  iat: number;
  exp: number;
}

/** A secret answer: `sha` is SHA-256 hex of the `value` JSON text (quotes included) as in the body. */
export interface SecretAttestation {
  typ: "secret";
  iss: string;
  key: number;
  org: number;
  /** The host the `domain` parameter names (attestedHost; "" when none was sent). */
  dom: string;
  name: string;
  sha: string;
  /** Present only when the call sent a non-empty nonce. */
  nonce?: string;
  iat: number;
  exp: number;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Who asked: the key, its organization, and the snapshot versions they were judged at. */
export interface Attester {
  iss: string;
  keyId: number;
  orgId: number;
  /** `<key version>|<org version>`, so that a change to the key or its organization signs afresh. */
  versions: string;
}

export interface Attestations {
  /** `contentKey`: the `content_key` asked for, null for every value; `content`: the exact JSON text of the answer's `content`. */
  content(by: Attester, host: string, contentKey: string | null, content: string, nowS: number): string;
  /** `valueJson`: the exact JSON text of the answer's `value`. */
  secret(by: Attester, host: string, name: string, valueJson: string, nonce: string | undefined, nowS: number): string;
}

interface Signed {
  token: string;
  at: number;
}

export function createAttestations(signingKey: SigningKey): Attestations {
  const signed = new Map<string, Signed>();
  let chars = 0;

  const sign = (claims: Omit<ContentAttestation, "iat" | "exp"> | Omit<SecretAttestation, "iat" | "exp">, nowS: number) =>
    signToken(signingKey, { ...claims, iat: nowS, exp: nowS + ATTESTATION_TTL_S });

  /** The token of `cacheKey` signed less than ATTESTATION_REUSE_S ago, or a fresh one. */
  const reuse = (cacheKey: string, nowS: number, claims: () => Parameters<typeof sign>[0]): string => {
    const hit = signed.get(cacheKey);
    if (hit && nowS - hit.at < ATTESTATION_REUSE_S && nowS >= hit.at) return hit.token;
    const token = sign(claims(), nowS);
    if (hit) chars -= cacheKey.length + hit.token.length;
    // Bounded by size, not count: a host may be 253 characters, and is in both key and token.
    if (chars + cacheKey.length + token.length > MAX_CACHED_CHARS) {
      signed.clear();
      chars = 0;
    }
    signed.set(cacheKey, { token, at: nowS });
    chars += cacheKey.length + token.length;
    return token;
  };

  return {
    content(by, host, contentKey, content, nowS) {
      const sha = sha256Hex(content);
      // Every claim but `iss` (one per process) and the times is in the key; the two free texts
      // last, as JSON, so that neither can pass for the other (a content key "null" is not every value).
      const cacheKey = `c|${by.keyId}|${by.orgId}|${by.versions}|${sha}|${JSON.stringify([contentKey, host])}`;
      return reuse(cacheKey, nowS, () => ({
        typ: "content",
        iss: by.iss,
        key: by.keyId,
        org: by.orgId,
        dom: host,
        ck: contentKey,
        sha,
      }));
    },
    secret(by, host, name, valueJson, nonce, nowS) {
      const sha = sha256Hex(valueJson);
      const claims = (): Omit<SecretAttestation, "iat" | "exp"> => ({
        typ: "secret",
        iss: by.iss,
        key: by.keyId,
        org: by.orgId,
        dom: host,
        name,
        sha,
        ...(nonce === undefined ? {} : { nonce }),
      });
      // Each nonce makes its own payload: caching those would only evict reusable entries.
      if (nonce !== undefined) return sign(claims(), nowS);
      return reuse(`s|${by.keyId}|${by.orgId}|${by.versions}|${sha}|${JSON.stringify([name, host])}`, nowS, claims);
    },
  };
}
