import { ALPHABET, randomToken } from "./hash.js";

/**
 * The API key formats (docs/verify.md, "Key format").
 *
 *     ak_live_<32 random characters>_<6 checksum characters>     client key, 47 characters
 *     sk_live_<40 random characters>_<6 checksum characters>     server key, 55 characters
 *
 * (`_test_` instead of `_live_` outside production.) Every character after the head is of
 * the unambiguous ALPHABET (57 letters and digits, no 0/O, 1/l/I). The checksum is the
 * CRC-32 (IEEE 802.3, zlib's) of everything before the last `_`, head included, written in
 * base 57 over ALPHABET, most significant digit first, six digits (57^6 > 2^32). A CRC-32
 * catches every change of one character and every swap of two neighbours.
 *
 * The `_` before the checksum is the format marker: keys issued before it existed
 * (`ak_live_` + 32, `sk_live_` + 40 characters of ALPHABET, no checksum) never hold a
 * third `_`, so they skip the checksum and are looked up as before. What this buys: a key with one
 * character changed is refused `invalid_key` before any snapshot or Redis lookup, and
 * secret scanners match the format with KEY_PATTERNS and can check the checksum.
 */

export type KeyKind = "client" | "server";

const BODY_LENGTH: Readonly<Record<KeyKind, number>> = { client: 32, server: 40 };
/** Keys of the old format had the same bodies (a load-test tool made 32-character server keys: either length is accepted). */
const LEGACY_BODY = BODY_LENGTH;
const HEAD_LENGTH = 8;
export const CHECKSUM_LENGTH = 6;
/** How many leading characters the public `prefix` shows: the head and four random characters. */
export const PREFIX_LENGTH = 12;

const CLASS = "[A-HJ-NP-Za-km-z2-9]";
/** What secret scanners match (the whole key; `\b` on both sides). */
export const KEY_PATTERNS = {
  client: new RegExp(`\\bak_(?:live|test)_${CLASS}{32}_${CLASS}{6}\\b`),
  server: new RegExp(`\\bsk_(?:live|test)_${CLASS}{40}_${CLASS}{6}\\b`),
  /** Keys issued before the checksum: no checksum to check. */
  legacyClient: new RegExp(`\\bak_(?:live|test)_${CLASS}{32}\\b`),
  legacyServer: new RegExp(`\\bsk_(?:live|test)_${CLASS}{40}\\b`),
} as const;

const CRC_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c;
}

/** CRC-32 of the first `end` characters of an ASCII string (a non-ASCII character simply fails to match). */
function crc32(text: string, end: number): number {
  let c = -1;
  for (let i = 0; i < end; i++) c = CRC_TABLE[(c ^ text.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** Digit value of each ASCII character in ALPHABET; -1 for any other. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
const BASE = ALPHABET.length;

/** The six checksum characters of `text` (the key without `_` and its checksum). */
export function keyChecksum(text: string): string {
  let n = crc32(text, text.length);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % BASE] + out;
    n = Math.floor(n / BASE);
  }
  return out;
}

export function keyHead(kind: KeyKind, production: boolean): string {
  return `${kind === "client" ? "ak" : "sk"}_${production ? "live" : "test"}_`;
}

/** A new key of the checksummed format, and its public prefix. */
export function issueKey(kind: KeyKind, production: boolean): { key: string; prefix: string } {
  const text = `${keyHead(kind, production)}${randomToken(BODY_LENGTH[kind])}`;
  const key = `${text}_${keyChecksum(text)}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH) };
}

const UNDERSCORE = 95;

/** A key of the old format: 32 or 40 characters of ALPHABET after the head, no checksum. */
function legacyBody(raw: string, n: number): boolean {
  if (n !== HEAD_LENGTH + LEGACY_BODY.client && n !== HEAD_LENGTH + LEGACY_BODY.server) return false;
  for (let i = HEAD_LENGTH; i < n; i++) {
    const code = raw.charCodeAt(i);
    if (code >= 128 || DIGIT[code] < 0) return false;
  }
  return true;
}

/** The kind a head names (`ak_live_`, `ak_test_`, `sk_live_`, `sk_test_`), or null. */
function kindOfHead(raw: string): KeyKind | null {
  if (raw.length < HEAD_LENGTH || raw.charCodeAt(1) !== 107 /* k */ || raw.charCodeAt(2) !== UNDERSCORE || raw.charCodeAt(7) !== UNDERSCORE) return null;
  if (!raw.startsWith("live", 3) && !raw.startsWith("test", 3)) return null;
  const first = raw.charCodeAt(0);
  return first === 97 /* a */ ? "client" : first === 115 /* s */ ? "server" : null;
}

/**
 * Whether a key as sent may exist, decided without any lookup: false for a string no
 * format ever issued (no `ak_`/`sk_` head, a length or a character no format has) and for
 * a key claiming the checksummed format (a `_` after the head) whose length, marker or
 * checksum is wrong. A well-formed key of the old format (no `_` after the head) has no
 * checksum: true, and the lookup decides. Cheap: measured in docs/verify.md.
 */
export function wellFormedKey(raw: string): boolean {
  const kind = kindOfHead(raw);
  if (kind === null) return false;
  const n = raw.length;
  // Old keys hold no `_` after the head: any one claims the checksummed format (a key cut short included).
  if (raw.indexOf("_", HEAD_LENGTH) === -1) return legacyBody(raw, n);
  if (n !== HEAD_LENGTH + BODY_LENGTH[kind] + 1 + CHECKSUM_LENGTH || raw.charCodeAt(n - CHECKSUM_LENGTH - 1) !== UNDERSCORE) return false;
  let sum = 0;
  for (let i = n - CHECKSUM_LENGTH; i < n; i++) {
    const code = raw.charCodeAt(i);
    const digit = code < 128 ? DIGIT[code] : -1;
    if (digit < 0) return false;
    sum = sum * BASE + digit;
  }
  return crc32(raw, n - CHECKSUM_LENGTH - 1) === sum;
}
