import { randomBytes } from "node:crypto";
import { hmacBytes, sha256 } from "../platform/crypto/hash.js";
import { deriveKey } from "../platform/crypto/seal.js";

/**
 * The secrets of member sign-in: link and session tokens (256 random bits, base64url, only
 * their SHA-256 stored), the CSRF token derived from a session, and the WebAuthn user
 * handle derived from a member id.
 */

/** A link or session token: 32 random bytes as 43 base64url characters. */
export const TOKEN_PATTERN = "^[A-Za-z0-9_-]{43}$";
const TOKEN_RE = new RegExp(TOKEN_PATTERN);

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export function isToken(value: string): boolean {
  return TOKEN_RE.test(value);
}

/** What is stored and looked up: the token itself never reaches the database. */
export function tokenHash(token: string): Buffer {
  return sha256(token);
}

/**
 * The session's CSRF token: an HMAC of the session token's digest under a key derived from
 * the master secret. Nothing to store; known only to whoever can read an answer of the
 * session (the same origin: the admin API sends no CORS headers) and never in a cookie.
 */
export function csrfTokenOf(masterSecret: Buffer, sessionTokenHash: Buffer): string {
  return hmacBytes(deriveKey(masterSecret, "csrf:v1"), sessionTokenHash).toString("base64url");
}

/**
 * The WebAuthn user handle of a member: 16 bytes, stable, opaque (no e-mail or id in clear
 * on the authenticator), different per member row so one person in two organizations has
 * two passkeys the browser can tell apart.
 */
export function userHandleOf(masterSecret: Buffer, memberId: number): Uint8Array<ArrayBuffer> {
  const mac = hmacBytes(deriveKey(masterSecret, "webauthn-user:v1"), Buffer.from(String(memberId)));
  return new Uint8Array(mac.subarray(0, 16));
}
