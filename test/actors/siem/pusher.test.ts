import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeLocalCa } from "../../../ops/local-servers.js";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startSiemPusher, type SiemPusher } from "../../../actors/siem/index.js";
import { pushNetwork } from "../../../actors/siem/transport/guard.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { type CliIo, runCli } from "../../../ops/cli.js";
import { collectStreams } from "../../../ops/cli/streams.js";
import { SYSLOG_PEN } from "../../../shared/events/syslog.js";
import {
  exactlyOnce,
  type FakeBulk,
  type FakeHec,
  type FakeHttp,
  type SyslogListener,
  startFakeBulk,
  startFakeHec,
  startFakeHttp,
  startSyslogListener,
} from "../../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addDestination, writeEvents } from "./support.js";

const TOKEN = "hec-token-0123";
let gw: TestGateway;
let relay: RunningActor;
let pusher: SiemPusher;
let hec: FakeHec;
let bulk: FakeBulk;
let syslog: SyslogListener;
let syslogTls: SyslogListener;
let receiver: FakeHttp;
let caPem: string;

async function tlsCertificate() {
  const now = Date.now();
  const ca = await makeLocalCa("SIEM Test CA", now, 1);
  const leaf = await ca.issue(["127.0.0.1"]);
  return { caPem: ca.pem, ...leaf };
}

async function org(name: string): Promise<number> {
  const created = await gw.admin("POST", "/orgs", { name, plan: "enterprise" });
  return created.body.org.id as number;
}

beforeAll(async () => {
  const certificate = await tlsCertificate();
  caPem = certificate.caPem;
  [hec, bulk, syslog, syslogTls, receiver] = await Promise.all([
    startFakeHec(TOKEN),
    startFakeBulk(),
    startSyslogListener(),
    startSyslogListener({ key: certificate.key, cert: certificate.cert }),
    startFakeHttp(),
  ]);
  gw = await startTestGateway("siempush", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  relay = await startOutboxRelay(gw.ctx);
  pusher = await startSiemPusher(gw.ctx, {
    batchSize: 40,
    lingerMs: 20,
    retry: { maxAttempts: 4, backoffBaseMs: 20, backoffMaxMs: 100 },
    claimIdleMs: 2_000,
    claimIntervalMs: 500,
    timeoutMs: 10_000,
    network: pushNetwork({
      outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
      resolver: null,
      caPem,
      timeoutMs: 10_000,
      hostname: "gateway.test",
    }),
  });
});

afterAll(async () => {
  await pusher?.stop();
  await relay?.stop();
  await gw?.stop();
  await Promise.all([hec, bulk, syslog, syslogTls, receiver].map((c) => c?.close()));
});

async function destinationState(orgId: number, id: number) {
  const got = await gw.admin("GET", `/orgs/${orgId}/siem/${id}`);
  expect(got.status).toBe(200);
  return got.body.destination as Record<string, unknown>;
}

describe("SIEM pusher", () => {
  it("delivers every event to a collector of each kind, each with its fixed id", async () => {
    const orgId = await org("All kinds");
    const ids = {
      hec: await addDestination(gw, orgId, { kind: "splunk_hec", url: hec.url, token: TOKEN, index: "security" }),
      bulk: await addDestination(gw, orgId, { kind: "elastic_bulk", url: bulk.url, index: "gateway" }),
      syslog: await addDestination(gw, orgId, { kind: "syslog_tcp", url: syslog.url }),
      tls: await addDestination(gw, orgId, { kind: "syslog_tcp", url: syslogTls.url }),
      http: await addDestination(gw, orgId, { kind: "http", url: `${receiver.url}/ingest`, token: "t" }),
    };
    await waitFor(() => Object.values(ids).every((id) => pusher.running().includes(id)));
    const events = await writeEvents(gw, orgId, 150);
    const collectors = { hec, bulk, syslog, syslogTls, receiver };
    const report = () =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(collectors).map(([name, c]) => [
            name,
            {
              ids: events.filter((id) => c.stored.has(id)).length,
              repeats: events.filter((id) => (c.stored.get(id) ?? 0) > 1).length,
              requests: c.requests,
            },
          ]),
        ),
      );
    // _bulk and the http receiver de-duplicate by id; HEC and syslog keep a repeat (at least once).
    const arrived = async (check: () => boolean) =>
      waitFor(check, 40_000).catch(async (error: unknown) => {
        const states = await Promise.all(Object.values(ids).map((id) => destinationState(orgId, id)));
        throw new Error(`${String(error)}: ${report()} ${JSON.stringify(states)}`);
      });
    await arrived(() => exactlyOnce(bulk.stored, events) && exactlyOnce(receiver.stored, events));
    await arrived(() => [hec, syslog, syslogTls].every((c) => events.every((id) => (c.stored.get(id) ?? 0) >= 1)));
    expect(hec.unauthorized).toBe(0);
    expect(hec.events[0]).toMatchObject({ index: "security", source: "access-gateway", sourcetype: "_json", host: "gateway.test" });
    expect(bulk.docs.get(String(events[0]))).toMatchObject({
      id: events[0],
      type: "scan.completed",
      domain: "example.com",
      "@timestamp": expect.any(String),
    });
    for (const listener of [syslog, syslogTls]) {
      const line = listener.lines.find((l) => l.sd[0].params.event_id === String(events[0]));
      expect(line).toMatchObject({
        facility: 10,
        severity: 6,
        version: 1,
        appName: "access-gateway",
        msgId: "scan.completed",
        hostname: "gateway.test",
      });
      expect(line?.sd[0].id).toBe(`gateway@${SYSLOG_PEN}`);
      expect(JSON.parse(line?.msg ?? "{}")).toMatchObject({ id: events[0], type: "scan.completed" });
    }
    expect(receiver.idempotencyKeys.length).toBeGreaterThan(0);
    await waitFor(async () => (await destinationState(orgId, ids.http)).delivered === 150);
    const state = await destinationState(orgId, ids.bulk);
    expect(state).toMatchObject({ delivered: 150, pending: 0, failed: 0, last_error: null, last_event_id: events[events.length - 1] });
    expect(typeof state.last_delivered_at).toBe("string");
    const list = await gw.admin("GET", `/orgs/${orgId}/siem`);
    expect(list.body.destinations.map((d: { id: number }) => d.id)).toEqual(Object.values(ids).sort((a, b) => a - b));
  }, 90_000);

  it("a collector failing the first N times still ends with every event exactly once by id", async () => {
    const orgId = await org("Flaky");
    const [flakyHec, flakyBulk, flakyHttp, flakySyslog] = await Promise.all([
      startFakeHec(TOKEN),
      startFakeBulk(),
      startFakeHttp(),
      startSyslogListener(),
    ]);
    try {
      flakyHec.failFirst = 3;
      flakyBulk.failFirst = 1;
      flakyBulk.storeThenFail = 2; // stored, but the answer is lost: the retry meets 409s
      flakyHttp.failFirst = 3;
      flakySyslog.resetFirst = 2;
      const dests = [
        await addDestination(gw, orgId, { kind: "splunk_hec", url: flakyHec.url, token: TOKEN }),
        await addDestination(gw, orgId, { kind: "elastic_bulk", url: flakyBulk.url }),
        await addDestination(gw, orgId, { kind: "http", url: flakyHttp.url }),
        await addDestination(gw, orgId, { kind: "syslog_tcp", url: flakySyslog.url }),
      ];
      await waitFor(() => dests.every((id) => pusher.running().includes(id)));
      const events = await writeEvents(gw, orgId, 100, "finding.overdue");
      for (const c of [flakyBulk, flakyHttp]) await waitFor(() => exactlyOnce(c.stored, events), 20_000);
      // HEC and syslog do not de-duplicate: at least once, every id there.
      for (const c of [flakyHec, flakySyslog]) await waitFor(() => events.every((id) => (c.stored.get(id) ?? 0) >= 1), 20_000);
      expect(flakyBulk.conflicts).toBeGreaterThan(0);
      expect(flakyBulk.docs.size).toBe(events.length);
      const state = await destinationState(orgId, dests[1]);
      expect(state.failed).toBe(0);
      // A loopback collector, reached through OUTBOUND_ALLOW_CIDRS: its status, never its words.
      expect(String(state.last_error)).toMatch(/ answered 50[03]$/);
      expect(flakySyslog.lines.every((l) => l.severity === 4)).toBe(true);
    } finally {
      await Promise.all([flakyHec, flakyBulk, flakyHttp, flakySyslog].map((c) => c.close()));
    }
  });

  it("a dead destination does not hold up a healthy one, of the same or another organization", async () => {
    const a = await org("Dead and alive");
    const b = await org("Neighbour");
    const [dead, hanging, alive, other] = await Promise.all([startFakeHttp(), startFakeHttp(), startFakeHttp(), startFakeBulk()]);
    try {
      dead.mode = "fail";
      hanging.mode = "hang";
      const deadId = await addDestination(gw, a, { kind: "http", url: dead.url });
      const hangingId = await addDestination(gw, a, { kind: "http", url: hanging.url });
      const aliveId = await addDestination(gw, a, { kind: "http", url: alive.url });
      const otherId = await addDestination(gw, b, { kind: "elastic_bulk", url: other.url });
      await waitFor(() => [deadId, hangingId, aliveId, otherId].every((id) => pusher.running().includes(id)));
      const [eventsA, eventsB] = await Promise.all([writeEvents(gw, a, 120), writeEvents(gw, b, 60)]);
      await waitFor(() => exactlyOnce(alive.stored, eventsA), 20_000);
      await waitFor(() => exactlyOnce(other.stored, eventsB), 20_000);
      // The healthy ones are done while the hanging one still holds its first batch.
      expect(hanging.stored.size).toBe(0);
      expect(hanging.hanging).toBeGreaterThan(0);
      const stuck = await destinationState(a, hangingId);
      expect(stuck.delivered).toBe(0);
      expect(stuck.pending).toBe(120);
      // Lag per destination: the destination's stream and group in `gateway streams` and /metrics.
      const streams = await collectStreams(gw.ctx.redis, gw.ctx.keys);
      const mine = streams.find((s) => s.stream === gw.ctx.keys.stream(`events:siem:${hangingId}`));
      const group = mine?.groups.find((g) => g.group === "siem");
      expect((group?.lag ?? 0) + (group?.pending ?? 0)).toBe(120);
      const metrics = { body: await (await fetch(`${gw.metricsUrl}/metrics`)).text() };
      expect(String(metrics.body)).toMatch(
        new RegExp(`gateway_group_(lag|pending)\\{stream="stream:events:siem:${hangingId}",group="siem"\\} [1-9]`),
      );
      // The failing one runs out of attempts: dead letters an operator can list and retry.
      await waitFor(async () => (await destinationState(a, deadId)).dead_letters === 120, 20_000);
      const state = await destinationState(a, deadId);
      expect(state).toMatchObject({ delivered: 0, failed: 120, pending: 0 });
      expect(String(state.last_error)).toContain("503");
      const letters = await gw.admin("GET", `/orgs/${a}/siem/${deadId}/dead-letters`);
      expect(letters.body.dead_letters).toHaveLength(100);
      expect(letters.body.dead_letters[0]).toMatchObject({
        reason: "exhausted",
        attempts: 4,
        event: { org_id: a, event: { id: expect.any(Number) } },
      });
      // The operator's CLI sees the same dead letters, by the destination's stream name.
      let out = "";
      const io: CliIo = { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } };
      expect(await runCli(["dead-letters", "list", `events:siem:${deadId}`, "--json", "--count", "500"], gw.env, io)).toBe(0);
      const listed = JSON.parse(out) as { dead_letters: { group: string; reason: string }[] };
      expect(listed.dead_letters).toHaveLength(120);
      expect(listed.dead_letters[0]).toMatchObject({ group: "siem", reason: "exhausted" });
      dead.mode = "ok";
      const one = letters.body.dead_letters[0].dead_id as string;
      const retriedOne = await gw.admin("POST", `/orgs/${a}/siem/${deadId}/dead-letters/retry`, { ids: [one, "1-1"] });
      expect(retriedOne.body).toMatchObject({ ok: true, retried: 1, not_found: ["1-1"] });
      const retried = await gw.admin("POST", `/orgs/${a}/siem/${deadId}/dead-letters/retry`, {});
      expect(retried.body).toMatchObject({ ok: true, retried: 119 });
      await waitFor(() => exactlyOnce(dead.stored, eventsA), 20_000);
      expect((await destinationState(a, deadId)).dead_letters).toBe(0);
    } finally {
      await Promise.all([dead, hanging, alive, other].map((c) => c.close()));
    }
  });

  it("sends a test event on request and says when the destination does not take it", async () => {
    const orgId = await org("Tester");
    const id = await addDestination(gw, orgId, { kind: "splunk_hec", url: hec.url, token: TOKEN });
    const before = hec.events.length;
    const sent = await gw.admin("POST", `/orgs/${orgId}/siem/${id}/test`);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ ok: true, test: { delivered: true, event_id: 0 } });
    expect(hec.events.slice(before).map((e) => (e.event as { type: string }).type)).toEqual(["siem.test"]);
    const wrong = await addDestination(gw, orgId, { kind: "splunk_hec", url: hec.url, token: "wrong" });
    const refused = await gw.admin("POST", `/orgs/${orgId}/siem/${wrong}/test`);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ ok: false, reason: "delivery_failed" });
    expect(refused.body.error).toContain("401");
  });

  it("deleting a destination stops its loop and drops its stream", async () => {
    const orgId = await org("Removed");
    const id = await addDestination(gw, orgId, { kind: "http", url: receiver.url });
    await waitFor(() => pusher.running().includes(id));
    const removed = await gw.admin("DELETE", `/orgs/${orgId}/siem/${id}`);
    expect(removed.status).toBe(200);
    await waitFor(() => !pusher.running().includes(id));
    expect((await gw.admin("GET", `/orgs/${orgId}/siem/${id}`)).status).toBe(404);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.stream(`events:siem:${id}`))).toBe(0);
  });
});
