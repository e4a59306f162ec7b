import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * AES-256-GCM sealing of values at rest (runtime secrets, SIEM tokens, webhook secrets).
 * The data key is derived from the master secret with HKDF, so the master secret itself
 * never encrypts anything and other derived keys (token signing) stay independent.
 * Layout: version (1) | IV (12) | tag (16) | ciphertext. The `aad` binds a value to its
 * place (e.g. "secret:<org>:<name>") so a sealed blob cannot be moved to another row.
 */
const VERSION = 1;

export function deriveKey(master: Buffer, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), `gateway:${purpose}`, length));
}

export function seal(master: Buffer, plaintext: string, aad: string): Buffer {
  const key = deriveKey(master, "seal:v1");
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function unseal(master: Buffer, sealed: Buffer, aad: string): string {
  if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error("sealed value has an unknown layout");
  const key = deriveKey(master, "seal:v1");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 13));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString("utf8");
}
