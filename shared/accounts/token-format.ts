import { randomBytes } from "node:crypto";
import { sha256 } from "../platform/crypto/hash.js";

/**
 * The organization token format (docs/accounts.md "Token format"):
 *
 *     gwt_ <32 base62 characters: random body> <6 base62 characters: checksum>
 *
 * 32 base62 characters carry about 190 random bits. The checksum is the first 4 bytes of
 * SHA-256 over `gwt_` and the body, as a base62 number padded to 6 characters: a mistyped
 * or truncated token is refused without a database lookup (1 in 2^32 typos get through to
 * the lookup, which then finds nothing), and secret scanners can match the whole token
 * with ORG_TOKEN_PATTERN and check the checksum to cut false positives.
 */
export const ORG_TOKEN_PREFIX = "gwt_";
export const ORG_TOKEN_BODY_LENGTH = 32;
export const ORG_TOKEN_CHECKSUM_LENGTH = 6;
export const ORG_TOKEN_LENGTH = ORG_TOKEN_PREFIX.length + ORG_TOKEN_BODY_LENGTH + ORG_TOKEN_CHECKSUM_LENGTH;
/** What secret scanners match: `gwt_[0-9A-Za-z]{38}`. */
export const ORG_TOKEN_PATTERN = /^gwt_[0-9A-Za-z]{38}$/;
/** How many leading characters `prefix` shows (the literal `gwt_` and 6 of the body). */
export const ORG_TOKEN_SHOWN = 10;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The checksum of a body: 4 bytes of SHA-256 over prefix and body, base62, fixed length. */
export function orgTokenChecksum(body: string): string {
  let n = sha256(`${ORG_TOKEN_PREFIX}${body}`).readUInt32BE(0);
  let out = "";
  for (let i = 0; i < ORG_TOKEN_CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A uniformly random base62 string (rejection sampling: no modulo bias). */
function randomBase62(length: number, random: (size: number) => Buffer): string {
  let out = "";
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new token; `random` is an input so tests can make it deterministic. */
export function newOrgToken(random: (size: number) => Buffer = randomBytes): { token: string; prefix: string } {
  const body = randomBase62(ORG_TOKEN_BODY_LENGTH, random);
  const token = `${ORG_TOKEN_PREFIX}${body}${orgTokenChecksum(body)}`;
  return { token, prefix: token.slice(0, ORG_TOKEN_SHOWN) };
}

/** Whether a bearer value is meant as an organization token (it may still be malformed). */
export function looksLikeOrgToken(value: string): boolean {
  return value.startsWith(ORG_TOKEN_PREFIX);
}

/** Whether `value` is a well-formed token whose checksum holds: no lookup is made otherwise. */
export function isWellFormedOrgToken(value: string): boolean {
  if (value.length !== ORG_TOKEN_LENGTH || !ORG_TOKEN_PATTERN.test(value)) return false;
  const body = value.slice(ORG_TOKEN_PREFIX.length, ORG_TOKEN_PREFIX.length + ORG_TOKEN_BODY_LENGTH);
  return value.slice(-ORG_TOKEN_CHECKSUM_LENGTH) === orgTokenChecksum(body);
}
