#!/usr/bin/env node
import { randomToken } from "../../shared/platform/crypto/hash.js";
import { issueKey, wellFormedKey } from "../../shared/platform/crypto/key-format.js";

/**
 * What verify's format check costs (docs/verify.md, "Key format"): `wellFormedKey` in a loop
 * over fresh copies of one key (a request brings a new string each time), in process, for
 * each kind of key the hot path meets. Prints CPU nanoseconds per check, best of five rounds.
 *   node dist/ops/bench/key-format.js [--calls N]
 */

const index = process.argv.indexOf("--calls");
const calls = index >= 0 && Number(process.argv[index + 1]) > 0 ? Number(process.argv[index + 1]) : 5_000_000;

const client = issueKey("client", true).key;
const cases: Record<string, string> = {
  "client key (40 characters)": client,
  "server key (48 characters)": issueKey("server", true).key,
  "client key, one character changed": `${client.slice(0, 20)}${client[20] === "A" ? "B" : "A"}${client.slice(21)}`,
  "old-format client key (no checksum)": `ak_live_${randomToken(32)}`,
};

let sink = 0;
for (const [name, key] of Object.entries(cases)) {
  const copies = Array.from({ length: 1024 }, () => JSON.parse(JSON.stringify(key)) as string);
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    // CPU time, not wall time: on a shared machine the wall clock counts the waits for a core.
    const started = process.cpuUsage();
    for (let i = 0; i < calls; i++) if (wellFormedKey(copies[i & 1023])) sink++;
    const used = process.cpuUsage(started);
    best = Math.min(best, ((used.user + used.system) * 1000) / calls);
  }
  process.stdout.write(`${name}: ${best.toFixed(1)} ns of CPU per check (${wellFormedKey(key) ? "passes" : "refused"})\n`);
}
if (sink < 0) process.stdout.write("unreachable\n");
