import type { ContentClaims } from "./attestation.js";
import type { EntitlementClaims } from "./tokens.js";

/** A verify success as the service sends it (interface.md 2.2); unknown fields are kept. */
export interface VerifyAnswer {
  authorized: true;
  reason: "ok";
  key: {
    id: number;
    name: string;
    prefix: string;
    environment: string;
    industry: string;
    scopes: string;
    domain: string;
    is_trial: boolean;
    expires_at: string;
  };
  domain: string;
  ts: number;
  expires_in: number;
  signature: string;
  nonce?: string;
  latency_ms: number;
  entitlement: string;
  entitlement_expires: number;
  lifeline: string;
  browser_guard?: string;
  firewall?: Record<string, unknown>;
  notice?: string;
  [field: string]: unknown;
}

/** Why the client itself refused an answer or could not get one. */
export type ClientReason = "bad_signature" | "stale_answer" | "bad_entitlement" | "bad_attestation" | "unreachable";

export type VerifyResult =
  /** The service said yes: the answer's signature, `ts`, entitlement and lifeline hold. */
  | { authorized: true; source: "service"; reason: "ok"; answer: VerifyAnswer; entitlement: EntitlementClaims }
  /** The service did not answer (network, timeout, 5xx): serving on the cached entitlement until it expires. */
  | { authorized: true; source: "entitlement"; reason: "ok"; entitlement: EntitlementClaims; fault: string }
  /** The service refused: closed at once, the cached entitlement forgotten. */
  | { authorized: false; source: "service"; reason: string; message: string; status: number; key?: VerifyAnswer["key"] }
  /** The client refused the answer (tampered, stale, entitlement not checking) or had nothing to serve on. */
  | { authorized: false; source: "client"; reason: ClientReason; message: string; fault?: string };

/** One content value (interface.md 2.3). */
export interface ContentItem {
  type: string;
  value: unknown;
  updated_at: string;
}

/** A content.php success as the service sends it (docs/content.md); unknown fields are kept. */
export interface ContentAnswer {
  ok: true;
  domain: string;
  content: Record<string, ContentItem>;
  ts: number;
  signature: string;
  latency_ms: number;
  attestation: string;
  [field: string]: unknown;
}

export type ContentResult =
  /** The content, its HMAC and its attestation checked (`attestation` holds the claims). */
  | { ok: true; source: "service"; content: Record<string, ContentItem>; answer: ContentAnswer; attestation: ContentClaims }
  /** The service refused (`not_found`, `origin_mismatch`, `domain_mismatch`, ...). */
  | { ok: false; source: "service"; reason: string; message: string; status: number }
  /** The client refused the answer (tampered, stale, attestation not checking) or got none. */
  | { ok: false; source: "client"; reason: ClientReason; message: string; fault?: string };
