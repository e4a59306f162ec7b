import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startSiemPusher, type SiemPusher } from "../../../actors/siem/index.js";
import { exactlyOnce, type FakeHttp, startFakeHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addDestination, writeEvents } from "./support.js";

/**
 * The pusher as an operator runs it (`node dist/ops/start.js actor siem`, built by
 * `npm test`), killed with SIGKILL while a batch is in flight: after a restart every
 * event still arrives (the killed consumer's pending entries are claimed).
 */
let gw: TestGateway;
let relay: RunningActor;
let collector: FakeHttp;
let child: ChildProcess | null = null;
let pusher: SiemPusher | null = null;
let output = "";

beforeAll(async () => {
  collector = await startFakeHttp();
  gw = await startTestGateway("siemkill", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  relay = await startOutboxRelay(gw.ctx);
});
afterAll(async () => {
  if (child?.pid && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await pusher?.stop();
  await relay?.stop();
  await gw?.stop();
  await collector?.close();
});

describe("SIEM pusher killed mid-batch", () => {
  it("loses nothing after a restart", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Kill", plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const destination = await addDestination(gw, orgId, { kind: "http", url: collector.url });
    collector.mode = "hang";
    child = spawn(process.execPath, ["dist/ops/start.js", "actor", "siem"], {
      // A short claim time: the killed child's lease on the destination (half of it) runs out soon.
      env: { ...process.env, ...gw.env, LOG_LEVEL: "warn", ACTOR_CLAIM_IDLE_MS: "2000" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const before = await writeEvents(gw, orgId, 300);
    // The child took a batch and is waiting for the collector's answer: kill it there.
    await waitFor(() => collector.hanging > 0, 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; child output: ${output}`);
    });
    process.kill(child.pid ?? 0, "SIGKILL");
    await new Promise((resolve) => child?.once("exit", resolve));
    expect(collector.stored.size).toBe(0);
    const stream = gw.ctx.keys.stream(`events:siem:${destination}`);
    const pending = await gw.ctx.redis.xpending(stream, "siem");
    expect(Number((pending as unknown[])[0])).toBeGreaterThan(0);

    const after = await writeEvents(gw, orgId, 100);
    collector.mode = "ok";
    pusher = await startSiemPusher(gw.ctx, { claimIdleMs: 300, claimIntervalMs: 200, lingerMs: 20 });
    const all = [...before, ...after];
    await waitFor(() => exactlyOnce(collector.stored, all), 30_000);
    await waitFor(async () => Number(((await gw.ctx.redis.xpending(stream, "siem")) as unknown[])[0]) === 0);
  });
});
