import { createHash, createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";

export function sha256(input: string | Buffer): Buffer {
  return createHash("sha256").update(input).digest();
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
  hash("sha256", innerScratch.subarray(0, at), "buffer").copy(outerScratch, BLOCK);
  return encoding === "hex" ? hash("sha256", outerScratch, "hex") : hash("sha256", outerScratch, "buffer");
}

/** A key's HMAC pads (the key zero-padded to a block, XOR ipad and XOR opad), made once per key. */
export interface HmacPads {
  readonly inner: Buffer;
  readonly outer: Buffer;
}

/** The pads of `key` (UTF-8); null when the key is longer than a block (hmacHex hashes it first then). */
export function hmacPads(key: string): HmacPads | null {
  const bytes = Buffer.from(key, "utf8");
  if (bytes.length > BLOCK) return null;
  const inner = Buffer.alloc(BLOCK);
  const outer = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    const byte = i < bytes.length ? bytes[i] : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  return { inner, outer };
}

/**
 * hmacHex(key, message) for a key whose pads are already made: a key that signs every call
 * (verify's signature) skips writing and XOR-ing its block each time.
 */
export function hmacHexPadded(pads: HmacPads, message: string): string {
  if (Buffer.byteLength(message) > innerScratch.length - BLOCK) {
    return hash(
      "sha256",
      Buffer.concat([pads.outer, hash("sha256", Buffer.concat([pads.inner, Buffer.from(message, "utf8")]), "buffer")]),
      "hex",
    );
  }
  pads.inner.copy(innerScratch, 0);
  pads.outer.copy(outerScratch, 0);
  const at = BLOCK + innerScratch.write(message, BLOCK, "utf8");
  hash("sha256", innerScratch.subarray(0, at), "buffer").copy(outerScratch, BLOCK);
  return hash("sha256", outerScratch, "hex");
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

// CSPRNG output fetched 4 KiB at a time: one syscall-backed fill serves 256 nonces.
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** Cryptographically random bytes from a pooled buffer (a private copy each call). */
export function pooledRandomBytes(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    pool = randomBytes(Math.max(4096, size));
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return out;
}
