import { timingSafeEqual } from "node:crypto";
import { type HmacBytePads, hmacBytePads, hmacBytes, hmacBytesPadded } from "../platform/crypto/hash.js";
import { memoize } from "../platform/memo.js";
import { UA_HASH_BYTES, uaHashBytes } from "./ua-hash.js";
import { NETWORK_HASH_BYTES, networkHashBytes } from "./network.js";

/** Default lifetime of a pass token: 24 hours (docs/security.md, item 9). */
export const TOKEN_TTL_S = 86_400;
/** The signing secret must have at least this many bytes. */
export const TOKEN_SECRET_MIN_BYTES = 32;

// Version 2 added the network binding; a version 1 token is refused (the visitor is challenged once more).
const VERSION = 2;
const MAX_KEY_ID_BYTES = 64;
const MAX_EXPIRY_S = 0xffff_ffff;
const MAC_BYTES = 32;
const NETWORK_AT = 1 + 4 + UA_HASH_BYTES;
const HEADER_BYTES = NETWORK_AT + NETWORK_HASH_BYTES; // version, expiry, UA hash, network hash; the key id follows
/** Domain separation: a MAC made for another purpose with the same secret never verifies here. */
const CONTEXT = Buffer.from("access-gateway/botcheck-token\0", "utf8");
const SHAPE = /^[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{43}$/;

export interface TokenIssue {
  keyId: string | number;
  userAgent: string;
  /** The visitor's address: the token is bound to its /24 (IPv4) or /48 (IPv6). */
  address: string;
  /** Unix seconds. */
  nowS: number;
  ttlS?: number;
}

export interface TokenCheck {
  keyId: string | number;
  userAgent: string;
  address: string;
  nowS: number;
}

/**
 * A pass token: `base64url(payload) "." base64url(HMAC-SHA256(secret, context ‖ payload))`.
 * Payload bytes: version (2) ‖ expiry, Unix seconds (uint32 BE) ‖ first 16 bytes of
 * SHA-256(User-Agent) ‖ first 8 bytes of SHA-256(visitor network, network.ts) ‖ key id
 * (UTF-8, 1–64 bytes). Nothing in it is secret.
 * Throws only on programming faults (bad secret, bad time, bad key id).
 */
export function issueToken(issue: TokenIssue, secret: Buffer): string {
  assertSecret(secret);
  const ttlS = issue.ttlS ?? TOKEN_TTL_S;
  const expiresS = issue.nowS + ttlS;
  if (!Number.isInteger(issue.nowS) || !Number.isInteger(ttlS) || ttlS <= 0 || expiresS > MAX_EXPIRY_S || issue.nowS < 0) {
    throw new RangeError("issueToken: nowS and ttlS must be whole seconds, ttlS > 0");
  }
  const keyId = Buffer.from(String(issue.keyId), "utf8");
  if (keyId.length === 0 || keyId.length > MAX_KEY_ID_BYTES) throw new RangeError("issueToken: key id must be 1-64 bytes");
  const payload = Buffer.alloc(HEADER_BYTES + keyId.length);
  payload.writeUInt8(VERSION, 0);
  payload.writeUInt32BE(expiresS, 1);
  uaHashBytes(issue.userAgent).copy(payload, 5);
  networkHashBytes(issue.address).copy(payload, NETWORK_AT);
  keyId.copy(payload, HEADER_BYTES);
  return `${payload.toString("base64url")}.${mac(payload, secret).toString("base64url")}`;
}

/**
 * True only for an untampered token of this secret, for this key, user agent and
 * visitor network, before its expiry (valid while nowS < expiry). Never throws on the token.
 */
export function verifyToken(token: unknown, check: TokenCheck, secret: Buffer): boolean {
  assertSecret(secret);
  if (typeof token !== "string") return false;
  const decoded = decodeToken(token);
  if (decoded === null) return false;
  const { payload, given } = decoded;
  if (!timingSafeEqual(given, mac(payload, secret))) return false;
  if (payload.readUInt8(0) !== VERSION) return false;
  if (check.nowS >= payload.readUInt32BE(1)) return false;
  if (!uaHashBytes(check.userAgent).equals(payload.subarray(5, NETWORK_AT))) return false;
  if (!networkHashBytes(check.address).equals(payload.subarray(NETWORK_AT, HEADER_BYTES))) return false;
  return payload.subarray(HEADER_BYTES).equals(Buffer.from(String(check.keyId), "utf8"));
}

interface DecodedToken {
  payload: Buffer;
  /** The MAC as sent. */
  given: Buffer;
}

/**
 * A token's two parts as bytes, or null when its shape, base64url spelling or lengths are
 * not a token's. Remembered per token string (bounded, memo.ts; a returning visitor sends
 * the same token all day): only its public decoding is held, never whether the MAC is
 * right, which verifyToken checks on every call. The buffers are shared: read only.
 */
const decodeToken = memoize(
  (token: string): DecodedToken | null => {
    if (!SHAPE.test(token)) return null;
    // SHAPE holds exactly one dot.
    const dot = token.indexOf(".");
    const payload = canonical(token.slice(0, dot));
    const given = canonical(token.slice(dot + 1));
    if (payload === undefined || given === undefined || given.length !== MAC_BYTES) return null;
    if (payload.length <= HEADER_BYTES || payload.length > HEADER_BYTES + MAX_KEY_ID_BYTES) return null;
    return { payload, given };
  },
  { maxLength: 256 },
);

/**
 * HMAC-SHA256(secret, CONTEXT ‖ payload), with the secret's pads made once per secret
 * (hash.ts hmacBytePads; the derived secret is 32 bytes). A longer secret goes to hmacBytes.
 */
function mac(payload: Buffer, secret: Buffer): Buffer {
  const pads = padsOf(secret);
  return pads === null ? hmacBytes(secret, CONTEXT, payload) : hmacBytesPadded(pads, CONTEXT, payload);
}

const padded = new WeakMap<Buffer, HmacBytePads>();

function padsOf(secret: Buffer): HmacBytePads | null {
  const known = padded.get(secret);
  if (known?.key.equals(secret)) return known;
  const made = hmacBytePads(secret, CONTEXT.length + HEADER_BYTES + MAX_KEY_ID_BYTES);
  if (made !== null) padded.set(secret, made);
  return made;
}

/** Decodes base64url only in its one canonical spelling, so no two strings make the same token. */
function canonical(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}

function assertSecret(secret: Buffer): void {
  if (!Buffer.isBuffer(secret) || secret.length < TOKEN_SECRET_MIN_BYTES) {
    throw new RangeError(`botcheck token secret must be at least ${TOKEN_SECRET_MIN_BYTES} bytes`);
  }
}
