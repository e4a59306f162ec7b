import { hash } from "node:crypto";
import { WORK_MAX_COUNTER } from "./work.js";

/**
 * The service's side of the hold's proof-of-work (the puzzle: work.ts). Checking a proof
 * is one SHA-256 of 20 bytes, whatever the difficulty.
 */

/** The key's difficulty when its settings predate the setting (README.md, "The hold's proof"). */
export const DEFAULT_DIFFICULTY = 18;
/** Highest difficulty a key may set: 2^24 hashes is about ten seconds of a desktop browser. */
export const MAX_DIFFICULTY = 24;
/** Bits added when the grant carries no credible interaction evidence (interaction.ts). */
export const NO_EVIDENCE_EXTRA_BITS = 2;

/** The key's difficulty, and the one asked of a grant without credible evidence (0 and 0: no proof). */
export function difficulties(setting: number | undefined): { difficulty: number; withoutEvidence: number } {
  const difficulty = setting === undefined ? DEFAULT_DIFFICULTY : setting;
  return { difficulty, withoutEvidence: difficulty === 0 ? 0 : difficulty + NO_EVIDENCE_EXTRA_BITS };
}

/** `proof` as sent: an integer 0..2^32−1, as a JSON number or decimal digits (form); anything else is no proof. */
export function parseProof(value: unknown): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" && /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  return Number.isInteger(n) && n >= 0 && n <= WORK_MAX_COUNTER ? n : undefined;
}

/** Leading zero bits of SHA-256(nonce bytes ‖ counter as uint32 big-endian). `nonce`: 32 hex characters. */
export function proofBits(nonce: string, counter: number): number {
  const message = Buffer.allocUnsafe(20);
  message.write(nonce, 0, 16, "hex");
  message.writeUInt32BE(counter, 16);
  const digest = hash("sha256", message, "buffer");
  let bits = 0;
  for (const byte of digest) {
    if (byte !== 0) return bits + Math.clz32(byte) - 24;
    bits += 8;
  }
  return bits;
}
