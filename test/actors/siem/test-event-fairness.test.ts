/**
 * The SIEM pusher's "send test event" responder serves organizations in turn: test events of
 * one organization whose collector accepts the connection and never answers, more of them
 * than the responder has slots, do not hold it, and another organization's test event behind
 * them in the stream is answered. The admin route lets an organization have only
 * SIEM_TESTS_OUTSTANDING requests outstanding, counted until a pusher handles them, so it
 * never publishes that many: the first test puts them on the stream itself. Real Redis,
 * PostgreSQL, the admin route, and a local TCP server that holds the slow organization's
 * connections until the test lets them go.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIEM_TESTS_AT_ONCE, SIEM_TESTS_PER_ORG, type SiemPusher, siemTestParty, startSiemPusher } from "../../../actors/siem/index.js";
import { pushNetwork } from "../../../actors/siem/transport/guard.js";
import { listenLoopback } from "../../../ops/local-servers.js";
import { SIEM_TEST_STREAM, SIEM_TESTS_OUTSTANDING, siemTestReplySchema } from "../../../shared/events/siem-stream.js";
import { REASONS } from "../../../shared/platform/reasons.js";
import { TEST_TIMEOUT_MS } from "../../../ingress/admin/siem.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { decodeFields } from "../../../shared/platform/streams/envelope.js";
import { request } from "../../../shared/platform/streams/request-reply.js";
import { type FakeHttp, startFakeHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { waitFor } from "../runtime/support.js";
import { addDestination } from "./support.js";

/** Longer than the test: a held connection stays held until the test lets it go. */
const SEND_TIMEOUT_MS = 60_000;

let gw: TestGateway;
let pusher: SiemPusher;
let receiver: FakeHttp;
let stalled: net.Server;
let stalledUrl: string;
/** Connections to the stalled collector, accepted and never answered. */
const held: net.Socket[] = [];
let releasing = false;

beforeAll(async () => {
  receiver = await startFakeHttp();
  stalled = net.createServer((socket) => {
    if (releasing) socket.destroy();
    else held.push(socket);
  });
  stalledUrl = `http://127.0.0.1:${await listenLoopback(stalled)}`;
  gw = await startTestGateway("siemtestfair", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  pusher = await startSiemPusher(gw.ctx, {
    timeoutMs: SEND_TIMEOUT_MS,
    network: pushNetwork({
      outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
      resolver: null,
      caPem: null,
      timeoutMs: SEND_TIMEOUT_MS,
      hostname: "gateway.test",
    }),
  });
});

afterAll(async () => {
  releasing = true;
  for (const socket of held.splice(0)) socket.destroy();
  await pusher?.stop();
  await gw?.stop();
  await receiver?.close();
  await new Promise<void>((resolve) => (stalled ? stalled.close(() => resolve()) : resolve()));
});

async function org(name: string): Promise<number> {
  const created = await gw.admin("POST", "/orgs", { name, plan: "enterprise" });
  return created.body.org.id as number;
}

const testStream = () => gw.ctx.keys.stream(SIEM_TEST_STREAM);

describe("SIEM test event fairness", () => {
  it("one organization's stalled test events leave room for another organization's", async () => {
    const [slow, other] = [await org("Stalled collector"), await org("Other")];
    // Several destinations of the slow organization: the turn is the organization's, not each destination's.
    const slowIds = [
      await addDestination(gw, slow, { kind: "http", url: `${stalledUrl}/a` }),
      await addDestination(gw, slow, { kind: "http", url: `${stalledUrl}/b` }),
      await addDestination(gw, slow, { kind: "http", url: `${stalledUrl}/c` }),
    ];
    const otherId = await addDestination(gw, other, { kind: "http", url: receiver.url });
    const before = await gw.ctx.redis.xlen(testStream());
    const fired = SIEM_TESTS_AT_ONCE * 2;
    let settled = 0;
    // As the admin route publishes them; more than it lets one organization have outstanding
    // (an ingress of the release before the cap, a count past its lifetime).
    const slowCalls = Array.from({ length: fired }, (_, n) =>
      request(
        gw.ctx.redis,
        gw.ctx.keys,
        testStream(),
        { destination_id: slowIds[n % slowIds.length], org_id: slow },
        SEND_TIMEOUT_MS,
        siemTestReplySchema,
      ).finally(() => settled++),
    );
    await waitFor(async () => (await gw.ctx.redis.xlen(testStream())) - before === fired, "the slow organization's requests in the stream");
    await waitFor(() => held.length >= SIEM_TESTS_PER_ORG, "the slow organization's test events to reach its collector");
    // Behind more stalled requests than the responder has slots.
    const answer = await gw.admin("POST", `/orgs/${other}/siem/${otherId}/test`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, test: { delivered: true, event_id: 0 } });
    // Answered while every one of the slow organization's calls still waits, and only its
    // share of slots ever reached its collector.
    expect(settled).toBe(0);
    expect(held).toHaveLength(SIEM_TESTS_PER_ORG);
    releasing = true;
    for (const socket of held.splice(0)) socket.destroy();
    const answers = await Promise.all(slowCalls);
    expect(answers.map((a) => a.ok)).toEqual(answers.map(() => false));
  });

  it(
    "an organization has at most SIEM_TESTS_OUTSTANDING tests outstanding, counted until a pusher handles them, past its caller's 504",
    async () => {
      releasing = false;
      const [busy, other] = [await org("Busy tester"), await org("Other tester")];
      const stalledId = await addDestination(gw, busy, { kind: "http", url: `${stalledUrl}/busy` });
      const healthyId = await addDestination(gw, busy, { kind: "http", url: receiver.url });
      const otherId = await addDestination(gw, other, { kind: "http", url: receiver.url });
      const count = async () => Number((await gw.ctx.redis.get(gw.ctx.keys.siemTestsOutstanding(busy))) ?? 0);
      const calls = Array.from({ length: SIEM_TESTS_OUTSTANDING }, () => gw.admin("POST", `/orgs/${busy}/siem/${stalledId}/test`));
      await waitFor(async () => (await count()) === SIEM_TESTS_OUTSTANDING, "the busy organization's tests counted");
      await waitFor(() => held.length >= 1, "its first test event to reach the stalled collector");

      const refused = await gw.admin("POST", `/orgs/${busy}/siem/${healthyId}/test`);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ ok: false, reason: "test_rate_limited", limit: SIEM_TESTS_OUTSTANDING });
      expect(REASONS.test_rate_limited.message).toContain(`has ${SIEM_TESTS_OUTSTANDING} test events`);
      // Per organization: another one's test is answered meanwhile.
      expect((await gw.admin("POST", `/orgs/${other}/siem/${otherId}/test`)).status).toBe(200);

      // The callers give up (504); their requests stay on the stream, a pusher still sends them, so they still count.
      const answers = await Promise.all(calls);
      expect(answers.map((a) => [a.status, a.body.reason])).toEqual(answers.map(() => [504, "timeout"]));
      expect(await count()).toBe(SIEM_TESTS_OUTSTANDING);
      expect((await gw.admin("POST", `/orgs/${busy}/siem/${healthyId}/test`)).status).toBe(429);
      // The safety net: the count runs out on its own if no pusher ever gives it back.
      const ttl = await gw.ctx.redis.pttl(gw.ctx.keys.siemTestsOutstanding(busy));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5 * 60_000);

      // The pusher handles them (the collector lets go): each handled one is given back.
      releasing = true;
      for (const socket of held.splice(0)) socket.destroy();
      await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.siemTestsOutstanding(busy))) === 0, "the count given back");
      const again = await gw.admin("POST", `/orgs/${busy}/siem/${healthyId}/test`);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
    },
    TEST_TIMEOUT_MS + 30_000,
  );

  it("the admin route names the organization; a request from before that field is still answered", async () => {
    const orgId = await org("Old ingress");
    const id = await addDestination(gw, orgId, { kind: "http", url: receiver.url });
    expect((await gw.admin("POST", `/orgs/${orgId}/siem/${id}/test`)).status).toBe(200);
    const [[, fields]] = await gw.ctx.redis.xrevrange(testStream(), "+", "-", "COUNT", 1);
    const published = decodeFields(fields);
    expect(published.ok && published.envelope.payload).toEqual({ destination_id: id, org_id: orgId });
    expect(siemTestParty({ destination_id: id, org_id: orgId })).toBe(String(orgId));

    // As an ingress of the previous release publishes it: no org_id, its turn is its destination's.
    const old = { destination_id: id };
    expect(siemTestParty(old)).toBe(`destination:${id}`);
    expect(await request(gw.ctx.redis, gw.ctx.keys, testStream(), old, 20_000, siemTestReplySchema)).toEqual({ ok: true, event_id: 0 });
    // A request naming another organization than the destination's finds nothing.
    const stranger = await org("Stranger");
    const crossed = { destination_id: id, org_id: stranger };
    expect(await request(gw.ctx.redis, gw.ctx.keys, testStream(), crossed, 20_000, siemTestReplySchema)).toEqual({
      ok: false,
      error: "no such destination",
    });
  });
});
