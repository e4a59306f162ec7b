/**
 * The hold's proof-of-work, the part every side shares: the widget solves with it in the
 * browser, the cost bench (ops/bench/botcheck-work.ts) times it, and
 * test/shared/botcheck/work.test.ts holds it equal to node:crypto. No imports: it is
 * bundled into botcheck.js as it is. The service checks a proof with node:crypto
 * (`proofBits`, proof.ts): one hash.
 *
 * The puzzle: find a counter c (0 ≤ c < 2^32) such that
 *   SHA-256(nonce bytes (16) ‖ c as 4 bytes big-endian)
 * starts with at least `bits` zero bits. The message is 20 bytes, one SHA-256 block, so
 * the search computes one compression per counter and keeps only the first word.
 */

/** Largest counter: the proof is an unsigned 32-bit integer. */
export const WORK_MAX_COUNTER = 0xffff_ffff;

/**
 * SHA-256's round constants: the first 32 bits of the fractional parts of the cube roots of
 * the first 64 primes, computed rather than listed (700 bytes less in botcheck.js; the test
 * holds every hash equal to node:crypto's).
 */
function roundConstants(): Int32Array {
  const k = new Int32Array(64);
  for (let n = 2, i = 0; i < 64; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
    if (prime) k[i++] = ((Math.cbrt(n) % 1) * 4294967296) | 0;
  }
  return k;
}

/** The nonce's 32 hex characters as the four big-endian words of the message. */
export function nonceWords(nonce: string): number[] {
  const words: number[] = [];
  for (let i = 0; i < 4; i++) words.push(parseInt(nonce.slice(i * 8, i * 8 + 8), 16) | 0);
  return words;
}

/**
 * A searcher for one nonce: `bitsOf(counter)` is the number of leading zero bits of
 * SHA-256(nonce ‖ counter), counted in the first word only (so at most 32: difficulties
 * stay far below). Built once per nonce; the schedule array is reused across counters.
 */
export function workSearcher(nonce: string): (counter: number) => number {
  const n = nonceWords(nonce);
  const K = roundConstants();
  const w = new Int32Array(64);
  return (counter) => {
    w[0] = n[0];
    w[1] = n[1];
    w[2] = n[2];
    w[3] = n[3];
    w[4] = counter | 0;
    w[5] = 0x80000000 | 0; // the padding bit right after the 20 message bytes
    for (let i = 6; i < 15; i++) w[i] = 0;
    w[15] = 160; // message length in bits
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = 0x6a09e667 | 0,
      b = 0xbb67ae85 | 0,
      c = 0x3c6ef372 | 0,
      d = 0xa54ff53a | 0;
    let e = 0x510e527f | 0,
      f = 0x9b05688c | 0,
      g = 0x1f83d9ab | 0,
      h = 0x5be0cd19 | 0;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    return Math.clz32((a + 0x6a09e667) | 0);
  };
}

/**
 * The first counter from `from` whose hash has at least `bits` leading zero bits, in one
 * synchronous loop (tools and tests; the widget searches in chunks instead). Expected
 * work: 2^bits hashes.
 */
export function solveWork(nonce: string, bits: number, from = 0): number {
  const bitsOf = workSearcher(nonce);
  for (let counter = from; counter <= WORK_MAX_COUNTER; counter++) if (bitsOf(counter) >= bits) return counter;
  throw new Error(`no ${bits}-bit proof for ${nonce}`);
}
