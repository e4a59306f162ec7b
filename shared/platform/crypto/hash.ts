import { createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";

export function sha256(input: string | Buffer): Buffer {
  // One-shot, through latin1 text: no Hash object, and no Buffer from hash() (see hmac below).
  return Buffer.from(hash("sha256", input, "binary"), "latin1");
}

export function sha256Hex(input: string | Buffer): string {
  // The one-shot form: no Hash object per call (about 3x cheaper on the verify path).
  return hash("sha256", input, "hex");
}

// HMAC-SHA256 (RFC 2104) as two one-shot hashes over scratch buffers: no Hmac object per
// call, ~0.4 µs cheaper on the verify path (measured 1.45 -> 1.10 µs). Single-threaded use
// only; the key's pads are overwritten by the next call.
const BLOCK = 64;
const innerScratch = Buffer.alloc(BLOCK + 4096);
const outerScratch = Buffer.alloc(BLOCK + 32);

/** Hex HMAC-SHA256 of `message` (UTF-8) keyed with `key` (UTF-8 when a string). */
export function hmacHex(key: string | Buffer, message: string): string {
  return hmac(key, [message], "hex");
}

/** HMAC-SHA256 of the concatenated `parts`, as bytes. */
export function hmacBytes(key: Buffer, ...parts: Buffer[]): Buffer {
  return hmac(key, parts, "buffer");
}

function hmac(key: string | Buffer, parts: readonly (string | Buffer)[], encoding: "hex"): string;
function hmac(key: string | Buffer, parts: readonly (string | Buffer)[], encoding: "buffer"): Buffer;
function hmac(key: string | Buffer, parts: readonly (string | Buffer)[], encoding: "hex" | "buffer"): string | Buffer {
  const keyBytes = typeof key === "string" ? Buffer.byteLength(key) : key.length;
  let messageBytes = 0;
  for (const part of parts) messageBytes += typeof part === "string" ? Buffer.byteLength(part) : part.length;
  if (keyBytes > BLOCK || messageBytes > innerScratch.length - BLOCK) {
    const slow = createHmac("sha256", key);
    for (const part of parts) slow.update(part);
    return encoding === "hex" ? slow.digest("hex") : slow.digest();
  }
  // The key, zero-padded to a block, XOR ipad / opad.
  innerScratch.fill(0, 0, BLOCK);
  if (typeof key === "string") innerScratch.write(key, 0, "utf8");
  else key.copy(innerScratch, 0);
  for (let i = 0; i < BLOCK; i++) {
    const byte = innerScratch[i];
    innerScratch[i] = byte ^ 0x36;
    outerScratch[i] = byte ^ 0x5c;
  }
  let at = BLOCK;
  for (const part of parts) at += typeof part === "string" ? innerScratch.write(part, at, "utf8") : part.copy(innerScratch, at);
  outerScratch.write(hash("sha256", innerScratch.subarray(0, at), "binary"), BLOCK, "latin1");
  // Bytes through latin1 text: hash() returning a Buffer costs ~0.35 µs more than this.
  return encoding === "hex" ? hash("sha256", outerScratch, "hex") : Buffer.from(hash("sha256", outerScratch, "binary"), "latin1");
}

/** Room after a key's inner pad for the message of hmacHexPadded; a longer message is hashed as text. */
const PADDED_ROOM = 1024;
/** Message lengths below this keep their view of the pad buffer (HmacPads.views). */
const VIEWS_KEPT = 256;

/** Buffer's own UTF-8 writer: Buffer.write without its argument checks (not in @types/node). */
type Utf8Writer = { utf8Write(text: string, offset: number): number };

/**
 * A key's HMAC pads, made once per key: the inner pad block with room for the message after
 * it, and the outer pad block with room for the inner digest after it. A signature is then
 * two one-shot hashes over bytes already in place: the message is written after the inner
 * pad, and the inner digest (latin1 text, one character per byte) after the outer pad.
 * Neither hash allocates a Buffer (node:crypto's `hash` costs about 0.45 µs more when it
 * returns one), and hashing bytes spares the flattening and encoding of the pad and
 * message as one new string (about 0.2 µs per signature, measured).
 */
export interface HmacPads {
  /** The inner pad block, then PADDED_ROOM bytes the message is written into: one signer at a time (single-threaded). */
  readonly inner: Buffer;
  /** The inner pad block as text (an ASCII key XOR 0x36 is ASCII): for a message past the room. */
  readonly innerText: string;
  /** The outer pad block, then the 32 bytes the inner digest is written into. */
  readonly outer: Buffer;
  /** inner.subarray(0, BLOCK + n), by message length n below VIEWS_KEPT: made once per length, not per call. */
  readonly views: (Buffer | undefined)[];
}

/** The pads of `key`; null when the key is not ASCII or longer than a block (hmacHex takes the general path then). */
export function hmacPads(key: string): HmacPads | null {
  if (key.length > BLOCK) return null;
  let innerText = "";
  const inner = Buffer.alloc(BLOCK + PADDED_ROOM);
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const byte = i < key.length ? key.charCodeAt(i) : 0;
    if (byte > 0x7f) return null;
    innerText += String.fromCharCode(byte ^ 0x36);
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  return { inner, innerText, outer, views: [] };
}

/**
 * hmacHex(key, message) for a key whose pads are already made: a key that signs every call
 * (verify's signature) skips building its blocks each time.
 */
export function hmacHexPadded(pads: HmacPads, message: string): string {
  let innerDigest: string;
  // At most three UTF-8 bytes per UTF-16 unit: a message this short always fits the room.
  if (message.length * 3 <= PADDED_ROOM) {
    const length = (pads.inner as unknown as Utf8Writer).utf8Write(message, BLOCK);
    let bytes = pads.views[length];
    if (bytes === undefined) {
      bytes = pads.inner.subarray(0, BLOCK + length);
      // Views of the usual lengths are kept (a verify message is ~60-130 bytes): at most
      // VIEWS_KEPT per key, however the lengths of the domains and nonces sent vary.
      if (length < VIEWS_KEPT) pads.views[length] = bytes;
    }
    innerDigest = hash("sha256", bytes, "binary");
  } else {
    innerDigest = hash("sha256", pads.innerText + message, "binary");
  }
  pads.outer.write(innerDigest, BLOCK, "latin1");
  return hash("sha256", pads.outer, "hex");
}

/** A byte key's pads, made once: the key's inner pad block with room for the message after it, and its outer pad block with room for the inner digest. */
export interface HmacBytePads {
  /** A copy of the key (a caller that reuses its buffer for another key can tell). */
  readonly key: Buffer;
  readonly inner: Buffer;
  readonly outer: Buffer;
}

/** The pads of `key` for messages of up to `maxMessageBytes`; null when the key is longer than a block. */
export function hmacBytePads(key: Buffer, maxMessageBytes: number): HmacBytePads | null {
  if (key.length > BLOCK) return null;
  const inner = Buffer.alloc(BLOCK + maxMessageBytes);
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const byte = i < key.length ? key[i] : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  return { key: Buffer.from(key), inner, outer };
}

/**
 * hmacBytes(pads.key, ...parts) for a key whose pads are made: each call copies the parts in
 * and runs the two hashes, without writing and XOR-ing the key's block. Parts longer than the
 * pads' room take the general path.
 */
export function hmacBytesPadded(pads: HmacBytePads, ...parts: Buffer[]): Buffer {
  let at = BLOCK;
  for (const part of parts) {
    if (at + part.length > pads.inner.length) return hmacBytes(pads.key, ...parts);
    at += part.copy(pads.inner, at);
  }
  pads.outer.write(hash("sha256", pads.inner.subarray(0, at), "binary"), BLOCK, 32, "latin1");
  return Buffer.from(hash("sha256", pads.outer, "binary"), "latin1");
}

/** Constant-time comparison of two strings of possibly different length. */
export function safeEqual(a: string, b: string): boolean {
  const left = sha256(a);
  const right = sha256(b);
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** The unambiguous alphabet of keys and tokens (no 0/O, 1/l/I): 57 letters and digits. */
export const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";

/** A random token over the unambiguous ALPHABET, unbiased by rejection. */
export function randomToken(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 256 - (256 % ALPHABET.length)) out += ALPHABET[byte % ALPHABET.length];
      if (out.length === length) break;
    }
  }
  return out;
}

// CSPRNG output fetched 4 KiB at a time: one syscall-backed fill serves 256 nonces of 16 bytes.
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** Buffer's own hex encoder: toString("hex", start, end) without its argument checks (not in @types/node). */
type HexSlicer = { hexSlice(start: number, end: number): string };

/**
 * `size` cryptographically random bytes from a pooled buffer, as lower-case hex (a bot-check
 * challenge's nonce): read straight off the pool, then wiped there, with no Buffer made per
 * call (copying them out first cost about as much as the rest of making a nonce).
 */
export function pooledRandomHex(size: number): string {
  if (poolOffset + size > pool.length) {
    pool = randomBytes(Math.max(4096, size));
    poolOffset = 0;
  }
  const out = (pool as unknown as HexSlicer).hexSlice(poolOffset, poolOffset + size);
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return out;
}
