import { ALPHABET, randomToken } from "./hash.js";

/**
 * The API key formats (docs/verify.md, "Key format").
 *
 *     ak_live_1<25 random characters><6 checksum characters>     client key, 40 characters
 *     sk_live_1<33 random characters><6 checksum characters>     server key, 48 characters
 *
 * (`_test_` instead of `_live_` outside production.) The random and checksum characters are
 * of the unambiguous ALPHABET (57 letters and digits, no 0/O, 1/l/I). The checksum is the
 * CRC-32 (IEEE 802.3, zlib's) of everything before it, head and marker included, written in
 * base 57 over ALPHABET, most significant digit first, six digits (57^6 > 2^32). A CRC-32
 * catches every change of one character and every swap of two neighbours.
 *
 * The `1` after the head is the format marker: keys issued before the checksum existed
 * (`ak_live_` + 32, `sk_live_` + 40 characters, all of ALPHABET) can never hold a `1`, so
 * they skip the checksum and are looked up as before. The lengths and the characters are
 * those of the old format (`[A-Za-z0-9]{32}` and `{40}` after the head still match), so
 * nothing that reads keys needs to change. What the checksum buys: a key with one character
 * changed is refused `invalid_key` before any snapshot or Redis lookup, and secret scanners
 * match the format with KEY_PATTERNS and can check the checksum.
 */

export type KeyKind = "client" | "server";

/** Characters after the head, marker and checksum included: the old format's lengths. */
const KEY_BODY: Readonly<Record<KeyKind, number>> = { client: 32, server: 40 };
const HEAD_LENGTH = 8;
const MARKER = "1";
export const CHECKSUM_LENGTH = 6;
/** How many leading characters the public `prefix` shows: the head and four more. */
export const PREFIX_LENGTH = 12;

const CLASS = "[A-HJ-NP-Za-km-z2-9]";
/** What secret scanners match (the whole key; `\b` on both sides). */
export const KEY_PATTERNS = {
  client: new RegExp(`\\bak_(?:live|test)_1${CLASS}{31}\\b`),
  server: new RegExp(`\\bsk_(?:live|test)_1${CLASS}{39}\\b`),
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

/** CRC-32 of the first `end` characters of an ASCII string; -1 (no checksum's value) when one is not ASCII. */
function crc32(text: string, end: number): number {
  let c = -1;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code > 127) return -1;
    c = CRC_TABLE[(c ^ code) & 0xff] ^ (c >>> 8);
  }
  return (c ^ -1) >>> 0;
}

/** Digit value of each ASCII character in ALPHABET; -1 for any other. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
const BASE = ALPHABET.length;

/** The six checksum characters of `text` (the key without its checksum). */
export function keyChecksum(text: string): string {
  let n = crc32(text, text.length);
  if (n < 0) throw new Error("a key is ASCII");
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
  const text = `${keyHead(kind, production)}${MARKER}${randomToken(KEY_BODY[kind] - 1 - CHECKSUM_LENGTH)}`;
  const key = `${text}${keyChecksum(text)}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH) };
}

const UNDERSCORE = 95;
const MARKER_CODE = MARKER.charCodeAt(0);

/** The kind a head names (`ak_live_`, `ak_test_`, `sk_live_`, `sk_test_`), or null. */
function kindOfHead(raw: string): KeyKind | null {
  if (raw.length < HEAD_LENGTH || raw.charCodeAt(1) !== 107 /* k */ || raw.charCodeAt(2) !== UNDERSCORE || raw.charCodeAt(7) !== UNDERSCORE)
    return null;
  if (!raw.startsWith("live", 3) && !raw.startsWith("test", 3)) return null;
  const first = raw.charCodeAt(0);
  return first === 97 /* a */ ? "client" : first === 115 /* s */ ? "server" : null;
}

/** Whether every character from `from` is of ALPHABET. */
function ofAlphabet(raw: string, from: number): boolean {
  for (let i = from; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code >= 128 || DIGIT[code] < 0) return false;
  }
  return true;
}

/**
 * Whether a key as sent may exist, decided without any lookup: false for a string no
 * format ever issued (no `ak_`/`sk_` head, a length or a character no format has) and for
 * a checksummed key (the marker after the head) whose checksum does not hold. A key of the
 * old format has no checksum: true, and the lookup decides. Cheap: measured in
 * docs/verify.md.
 */
export function wellFormedKey(raw: string): boolean {
  const kind = kindOfHead(raw);
  if (kind === null) return false;
  const n = raw.length;
  if (raw.charCodeAt(HEAD_LENGTH) !== MARKER_CODE) {
    // The old format: 32 or 40 characters of ALPHABET (a load-test tool made 32-character server keys).
    return (n === HEAD_LENGTH + KEY_BODY.client || n === HEAD_LENGTH + KEY_BODY.server) && ofAlphabet(raw, HEAD_LENGTH);
  }
  if (n !== HEAD_LENGTH + KEY_BODY[kind]) return false;
  let sum = 0;
  for (let i = n - CHECKSUM_LENGTH; i < n; i++) {
    const code = raw.charCodeAt(i);
    const digit = code < 128 ? DIGIT[code] : -1;
    if (digit < 0) return false;
    sum = sum * BASE + digit;
  }
  return crc32(raw, n - CHECKSUM_LENGTH) === sum;
}
