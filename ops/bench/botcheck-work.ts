#!/usr/bin/env node
import { hash, randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { DEFAULT_DIFFICULTY, NO_EVIDENCE_EXTRA_BITS, proofBits, workSearcher } from "../../shared/botcheck/index.js";

/**
 * What one pass token costs a script: the hold's proof-of-work (shared/botcheck/README.md)
 * solved for fresh random nonces, at the default difficulty and at the one asked without
 * interaction evidence, two ways on one core of this machine:
 * - `node:crypto`: a script's obvious way, one `crypto.hash("sha256", …)` per counter;
 * - `widget`: the widget's own SHA-256 in JavaScript (work.ts), as botcheck.js runs it.
 *   node dist/ops/bench/botcheck-work.js [--tokens 24]
 * Every proof found is checked with the service's `proofBits`. Prints, does not judge.
 */

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

type Solve = (nonce: string, bits: number) => number;

const withNodeCrypto: Solve = (nonce, bits) => {
  const message = Buffer.alloc(20);
  message.write(nonce, 0, 16, "hex");
  for (let counter = 0; ; counter++) {
    message.writeUInt32BE(counter, 16);
    const digest = hash("sha256", message, "buffer");
    if (Math.clz32(digest.readUInt32BE(0)) >= bits) return counter;
  }
};

const withWidgetCode: Solve = (nonce, bits) => {
  const bitsOf = workSearcher(nonce);
  for (let counter = 0; ; counter++) if (bitsOf(counter) >= bits) return counter;
};

function measure(label: string, solve: Solve, bits: number, tokens: number): void {
  let hashes = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < tokens; i++) {
    const nonce = randomBytes(16).toString("hex");
    const proof = solve(nonce, bits);
    if (proofBits(nonce, proof) < bits) throw new Error(`${label}: proof ${proof} does not check`);
    hashes += proof + 1;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const perToken = hashes / tokens;
  process.stdout.write(
    `${label.padEnd(12)} ${String(bits).padStart(2)} bits  ${tokens} tokens  ` +
      `${Math.round(perToken).toLocaleString("en").padStart(10)} hashes/token (expected ${(2 ** bits).toLocaleString("en")})  ` +
      `${(ms / tokens).toFixed(0).padStart(5)} ms/token  ${(hashes / ms / 1000).toFixed(2)} M hashes/s\n`,
  );
}

function main(): void {
  const tokens = option("tokens", 24);
  process.stdout.write(
    `node ${process.version}, ${cpus()[0]?.model ?? "?"} (${cpus().length} cores, load ${loadavg()[0].toFixed(1)}), one core\n`,
  );
  for (const bits of [DEFAULT_DIFFICULTY, DEFAULT_DIFFICULTY + NO_EVIDENCE_EXTRA_BITS]) {
    measure("node:crypto", withNodeCrypto, bits, tokens);
    measure("widget", withWidgetCode, bits, tokens);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
