#!/usr/bin/env node
import { solveWork } from "../../shared/botcheck/index.js";
import { browserHeaders, SIGNALS } from "./botcheck.js";
import { measure, openInprocGateway, option } from "./inproc-harness.js";
import { BENCH_DOMAIN } from "./seed.js";

/**
 * inproc.js for botcheck.php assess: the bench's desktop Chrome (botcheck.ts: its headers
 * and signals, a key with bot protection on) dispatched in-process, `--inflight` calls at
 * a time, for `--calls` calls of each visitor: `new` (no token: assessed, challenged, a
 * nonce stored in Redis) and `token` (a pass token earned once: assessed, let through).
 * Prints the CPU time (user + system) of this process per call, as inproc.js does; the
 * reply's JSON is not written (nor is verify's there). `--only new|token` runs one.
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/ops/bench/inproc-botcheck.js [--calls N] [--inflight N] [--only new]
 */

async function main(): Promise<void> {
  const calls = option("calls", 100_000);
  const inflight = option("inflight", 64);
  const onlyAt = process.argv.indexOf("--only");
  const only = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
  const gateway = await openInprocGateway();
  const { seeded, dispatch } = gateway;
  const headers = { ...browserHeaders(BENCH_DOMAIN), "content-type": "application/json", host: "127.0.0.1" };
  const request = gateway.poster("/api/v1/botcheck.php", headers);
  const post = async (body: unknown): Promise<Record<string, unknown>> => {
    const reply = await dispatch(request(Buffer.from(JSON.stringify(body))));
    if (reply.status !== 200) throw new Error(`botcheck answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body as Record<string, unknown>;
  };
  const assess = { key: seeded.botcheckKey, action: "assess", signals: SIGNALS };
  const first = await gateway.firstAnswer(() => request(Buffer.from(JSON.stringify(assess))));
  const challenged = first.body as Record<string, unknown>;
  if (first.status !== 200 || challenged.challenge !== true) throw new Error(`botcheck did not challenge: ${JSON.stringify(first.body)}`);
  const nonce = String(challenged.nonce);
  const proof = solveWork(nonce, (challenged.config as { difficulty_without_evidence: number }).difficulty_without_evidence);
  const granted = await post({ key: seeded.botcheckKey, action: "grant", nonce, held_ms: 1600, proof });
  if (typeof granted.token !== "string") throw new Error(`botcheck grant failed: ${JSON.stringify(granted)}`);
  const visitors = [
    { name: "new", body: Buffer.from(JSON.stringify(assess)), expect: "challenge" },
    { name: "token", body: Buffer.from(JSON.stringify({ ...assess, token: granted.token })), expect: "verified" },
  ].filter((visitor) => only === undefined || visitor.name === only);
  for (const visitor of visitors) {
    const answer = await post(JSON.parse(visitor.body.toString()));
    if (answer[visitor.expect] !== true) throw new Error(`botcheck ${visitor.name}: ${JSON.stringify(answer)}`);
    await measure(`botcheck ${visitor.name.padEnd(5)}`, dispatch, () => request(visitor.body), { calls, inflight, warmup: 30_000 });
  }
  await gateway.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`inproc-botcheck failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
