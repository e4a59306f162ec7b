#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { measure, openInprocGateway, option } from "./inproc-harness.js";
import { BENCH_DOMAIN } from "./seed.js";

/**
 * The route's own cost, without HTTP and without a load generator on the same cores:
 * verify.php dispatched in-process, `--inflight` calls at a time (default 64, like the
 * bench's connections), for `--calls` calls; prints the CPU time (user + system) of this
 * process per call, which counts the route, the counting batcher and ioredis. Run it
 * under `node --cpu-prof` for a profile of the route alone:
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/ops/bench/inproc.js [--calls N] [--inflight N]
 */

async function main(): Promise<void> {
  const calls = option("calls", 300_000);
  const inflight = option("inflight", 64);
  const gateway = await openInprocGateway();
  const body = Buffer.from(JSON.stringify({ key: gateway.seeded.key, domain: BENCH_DOMAIN, nonce: randomBytes(16).toString("hex") }));
  const headers = { "content-type": "application/json", host: "127.0.0.1" };
  const post = gateway.poster("/api/v1/verify.php", headers);
  const make = () => post(body);
  const probe = await gateway.firstAnswer(make);
  if (probe.status !== 200) throw new Error(`verify answered ${probe.status}: ${JSON.stringify(probe.body)}`);
  await measure("verify", gateway.dispatch, make, { calls, inflight, warmup: 50_000 });
  await gateway.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`inproc failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
