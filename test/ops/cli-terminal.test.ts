import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../actors/index.js";
import { startOutboxRelay } from "../../actors/outbox/index.js";
import { startSiemPusher, type SiemPusher } from "../../actors/siem/index.js";
import { pushNetwork } from "../../actors/siem/transport/guard.js";
import { outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import { type CliIo, runCli } from "../../ops/cli.js";
import { terminalSafe } from "../../ops/cli/format.js";
import { LAST_ERROR_MAX_CHARS } from "../../shared/events/db/last-error.js";
import { recordFailure } from "../../shared/events/db/siem.js";
import { deliveryId, enqueueDeliveries, recordAttempt } from "../../shared/events/db/webhooks.js";
import { startTestGateway, type TestGateway, waitFor } from "../helpers/gateway.js";
import { addDestination, writeEvents } from "../actors/siem/support.js";

/**
 * A collector's answer is the peer's text: it is stored bounded as `last_error`, and the CLI
 * prints it (and every other string from the server or Redis) without the escape sequences,
 * control characters and bidirectional overrides it may carry.
 */

/** Sets the terminal's title, clears the screen, colours, reorders, moves the cursor (8-bit CSI), fakes a line. */
const HOSTILE = "\u001b]0;owned\u0007\u001b[2J\u001b[31mALERT\u001b[0m \u202eevil\u202c \u009b1;1H\r\nfake line\u0008\u0000";
/** Control characters a printed line must not hold (line feeds between lines are the CLI's own). */
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

let gw: TestGateway;
let env: Record<string, string>;
let relay: RunningActor;
let pusher: SiemPusher;
let collector: http.Server;
let collectorUrl: string;
let orgId: number;

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(500, { "content-type": "text/plain" }).end(HOSTILE));
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  gw = await startTestGateway("cliterm", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  env = { ...gw.env, SITE_URL: gw.url };
  relay = await startOutboxRelay(gw.ctx);
  // The collector listens on loopback (OUTBOUND_ALLOW_CIDRS): counted public here, so its answer
  // is quoted in `last_error` as a collector's on the internet is.
  const network = pushNetwork({
    outbound: outboundPolicyOf("siem", gw.ctx.config),
    resolver: null,
    caPem: null,
    timeoutMs: 10_000,
    hostname: "gateway.test",
    isPublic: () => true,
  });
  pusher = await startSiemPusher(gw.ctx, { lingerMs: 10, retry: { maxAttempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 }, network });
  orgId = (await gw.admin("POST", "/orgs", { name: "Terminal" })).body.org.id as number;
});

afterAll(async () => {
  await pusher?.stop();
  await relay?.stop();
  await gw?.stop();
  await new Promise((resolve) => collector?.close(resolve));
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const state = { out: "", err: "" };
  const io: CliIo = { stdout: { write: (s: string) => (state.out += s) }, stderr: { write: (s: string) => (state.err += s) } };
  const code = await runCli(argv, env, io);
  return { code, ...state };
}

function expectSafe(output: string) {
  expect(output, JSON.stringify(output)).not.toMatch(UNSAFE);
  expect(output).not.toContain("owned");
}

describe("terminalSafe", () => {
  it.each([
    ["\u001b[31mred\u001b[0m", "red"],
    ["\u001b]0;title\u0007after", "after"],
    ["\u001b]8;;http://evil.example\u001b\\link\u001b]8;;\u001b\\", "link"],
    ["\u009b2Jx", "x"],
    ["\u001bP+q\u001b\\dcs", "dcs"],
    ["\u001bcreset", "reset"],
    ["a\u202eb\u202cc\u2066d\u2069\u200fe\u061cf", "abcdef"],
    ["line\r\nnext\ttab\u2028sep", "line  next tab sep"],
    ["bell\u0007 bs\u0008 nul\u0000 del\u007f c1\u0085", "bell bs nul del c1 "],
    ["plain, ünïcode ✓ 東京", "plain, ünïcode ✓ 東京"],
  ])("%j → %j", (input, expected) => {
    expect(terminalSafe(input)).toBe(expected);
  });
});

describe("a collector's answer through the CLI", () => {
  it("is stored bounded, and siem state, dead letters and errors print it without control characters", async () => {
    const id = await addDestination(gw, orgId, { kind: "http", url: collectorUrl });
    await waitFor(() => pusher.running().includes(id));
    await writeEvents(gw, orgId, 1);
    const state = await waitFor(async () => {
      const got = await gw.admin("GET", `/orgs/${orgId}/siem/${id}`);
      return got.body.destination.dead_letters > 0 ? got.body.destination : null;
    });
    expect(state.last_error).toContain("\u001b[31mALERT");

    const human = await cli("siem", "state", "--org", String(orgId), String(id));
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/last error\s+.*ALERT\s+evil/);
    expectSafe(human.out);
    // --json keeps the value (it parses back to what was stored) and is as safe on a terminal.
    const json = await cli("siem", "state", "--org", String(orgId), String(id), "--json");
    expect(JSON.parse(json.out).destination.last_error).toBe(state.last_error);
    expect(json.out.trimEnd()).not.toMatch(UNSAFE);
    const letters = await cli("dead-letters", "list", `events:siem:${id}`);
    expect(letters.out).toContain("collector answered 500");
    expectSafe(letters.out);
    const lettersJson = await cli("dead-letters", "list", `events:siem:${id}`, "--json");
    expect(JSON.parse(lettersJson.out).dead_letters[0].error).toContain("\u001b[31mALERT");
    expect(lettersJson.out.trimEnd()).not.toMatch(UNSAFE);

    // Stored bounded, whatever the transport hands over; NUL (which PostgreSQL text refuses) replaced.
    await recordFailure(gw.ctx.db, id, `${HOSTILE}${"y".repeat(5_000)}`, 0, gw.ctx.clock.now());
    const { rows } = await gw.ctx.db.query<{ last_error: string }>("SELECT last_error FROM siem_destinations WHERE id = $1", [id]);
    expect(Array.from(rows[0].last_error)).toHaveLength(LAST_ERROR_MAX_CHARS);
    expect(rows[0].last_error.endsWith("y…")).toBe(true);
    expect(rows[0].last_error).not.toContain("\u0000");
    expectSafe((await cli("siem", "state", "--org", String(orgId), String(id))).out);
  });

  it("a webhook delivery's error is stored bounded and printed safe", async () => {
    const created = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: `${collectorUrl}/hook`, secret: "whsec_0123456789abcdef" });
    expect(created.status).toBe(201);
    const webhookId = created.body.webhook.id as number;
    const [eventId] = await writeEvents(gw, orgId, 1, "finding.assigned");
    await enqueueDeliveries(gw.ctx.db, { orgId, eventId, eventType: "finding.assigned", bodyFor: () => "{}", nowMs: gw.ctx.clock.now() });
    const delivery = deliveryId(eventId, webhookId);
    await recordAttempt(
      gw.ctx.db,
      delivery,
      { kind: "retry", status: 500, error: `${HOSTILE}${"z".repeat(5_000)}`, nextAttemptMs: gw.ctx.clock.now() + 60_000 },
      gw.ctx.clock.now(),
    );
    const { rows } = await gw.ctx.db.query<{ last_error: string }>("SELECT last_error FROM webhook_deliveries WHERE id = $1", [delivery]);
    expect(Array.from(rows[0].last_error)).toHaveLength(LAST_ERROR_MAX_CHARS);
    for (const argv of [
      ["webhook", "deliveries", "--org", String(orgId), String(webhookId)],
      ["webhook", "list", "--org", String(orgId)],
    ]) {
      const run = await cli(...argv);
      expect(run.code).toBe(0);
      expect(run.out).toContain("ALERT");
      expectSafe(run.out);
    }
    await recordAttempt(gw.ctx.db, delivery, { kind: "failed", status: null, error: "x".repeat(2_000) }, gw.ctx.clock.now());
    const failed = await gw.ctx.db.query<{ last_error: string }>("SELECT last_error FROM webhook_deliveries WHERE id = $1", [delivery]);
    expect(failed.rows[0].last_error).toHaveLength(LAST_ERROR_MAX_CHARS);
  });

  it("an answer that is not JSON is quoted on stderr without its control characters", async () => {
    const run = await cli("org", "get", "1", "--url", collectorUrl, "--token", "t");
    expect(run.code).toBe(1);
    expect(run.err).toContain("without JSON");
    expect(run.err).toContain("ALERT");
    expectSafe(run.err);
  });
});
