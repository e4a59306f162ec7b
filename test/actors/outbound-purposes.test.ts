import http from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../actors/index.js";
import { startNotifier } from "../../actors/notifier/index.js";
import { startOutboxRelay } from "../../actors/outbox/index.js";
import { probeUrl } from "../../actors/prober/handler.js";
import { proberDeps } from "../../actors/prober/index.js";
import { scanOptionsOf } from "../../shared/platform/net/outbound/options.js";
import { runScan } from "../../actors/scanner/scan.js";
import { startSiemPusher, type SiemPusher } from "../../actors/siem/index.js";
import { unreachableHost } from "../../shared/platform/net/outbound/ssrf.js";
import { type FakeHttp, startFakeHttp } from "../fixtures/siem/collectors.js";
import { type FixtureDns, startDnsServer } from "../fixtures/scanner/dns-server.js";
import { type FixtureWeb, startWebServers } from "../fixtures/scanner/web-servers.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";
import { addDestination, writeEvents } from "./siem/support.js";

/**
 * One gateway with only the operator's allowlist for customer destinations set
 * (OUTBOUND_ALLOW_CIDRS=127.0.0.0/8; neither SCAN_ALLOW_PRIVATE nor PROBE_ALLOW_PRIVATE): each
 * outbound purpose reaches what its own policy says, through the one guard.
 */
let gw: TestGateway;
let dns: FixtureDns;
let web: FixtureWeb;
let collector: FakeHttp;
let receiver: http.Server;
let receiverUrl: string;
/** A service inside the listed block that is not a collector: it answers every request 500 with its own words. */
let internal: http.Server;
let internalUrl: string;
const INTERNAL_WORDS = "internal-admin-panel: db password hunter2";
const hooks: string[] = [];
/** What the pusher and the notifier log (the context's logger is silent). */
const logged: string[] = [];
let relay: RunningActor;
let notifier: RunningActor;
let pusher: SiemPusher;

beforeAll(async () => {
  [dns, web, collector] = await Promise.all([startDnsServer(), startWebServers(), startFakeHttp()]);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hooks.push(String(req.headers["x-event-type"]));
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  internal = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(500, { "content-type": "text/plain" }).end(INTERNAL_WORDS));
  });
  await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
  internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/`;
  gw = await startTestGateway("outbound", {
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_HTTP_PORT: String(web.httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
  });
  relay = await startOutboxRelay(gw.ctx);
  const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(line) });
  notifier = await startNotifier({ ...gw.ctx, logger });
  pusher = await startSiemPusher({ ...gw.ctx, logger }, { lingerMs: 10 });
});

afterAll(async () => {
  await pusher?.stop();
  await notifier?.stop();
  await relay?.stop();
  await gw?.stop();
  await Promise.all([
    dns?.stop(),
    web?.stop(),
    collector?.close(),
    new Promise((resolve) => receiver?.close(resolve)),
    new Promise((resolve) => internal?.close(resolve)),
  ]);
});

async function org(name: string): Promise<number> {
  return (await gw.admin("POST", "/orgs", { name, plan: "enterprise" })).body.org.id as number;
}

describe("outbound requests, each under its purpose's policy", () => {
  it("a scan of a loopback target is refused while a SIEM push to loopback is delivered", async () => {
    // good.test resolves to 127.0.0.1, where the fixture web servers answer.
    const scan = await runScan("good.test", scanOptionsOf(gw.ctx.config), Date.now());
    const certificate = scan.web.findings.find((f) => f.id === "tls:certificate");
    expect(certificate?.detail).toContain("refused by the SSRF guard");
    expect(certificate?.detail).toContain("(loopback)");

    const orgId = await org("SIEM on loopback");
    const id = await addDestination(gw, orgId, { kind: "http", url: collector.url });
    await waitFor(() => pusher.running().includes(id));
    const events = await writeEvents(gw, orgId, 5);
    await waitFor(() => events.every((e) => collector.stored.has(e)), 20_000);
  });

  it("the prober does not reach private space without its own setting", async () => {
    const probe = await probeUrl(`http://127.0.0.1:${web.httpPort}/`, proberDeps(gw.ctx).options);
    expect(probe).toMatchObject({ ok: false, error: expect.stringContaining("SSRF guard") });
  });

  it("a webhook reaches a listed address; one outside the allowlist is refused at creation or at delivery", async () => {
    const orgId = await org("Webhooks");
    const secret = "whsec_0123456789abcdef";
    const literal = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: "http://10.0.0.1/hook", secret });
    expect(literal.status).toBe(400);
    expect(literal.body).toMatchObject({ reason: "bad_url", detail: expect.stringContaining("(private; OUTBOUND_ALLOW_CIDRS") });
    const metadata = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: "http://169.254.169.254/latest", secret });
    expect(metadata.body).toMatchObject({ reason: "bad_url", detail: "the address is refused (metadata)" });
    // A name is judged at delivery, after DNS: private.test resolves to 10.0.0.1, nothing-here.test to nothing.
    const named = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: "http://private.test/hook", secret });
    expect(named.status).toBe(201);
    const missing = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: "http://nothing-here.test/hook", secret });
    expect(missing.status).toBe(201);
    const listed = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: receiverUrl, secret });
    expect(listed.status).toBe(201);
    await writeEvents(gw, orgId, 1);
    await waitFor(() => hooks.length > 0);
    const attempted = (id: number) =>
      waitFor(async () => {
        const rows = (await gw.admin("GET", `/orgs/${orgId}/webhooks/${id}/deliveries`)).body.deliveries as Record<string, unknown>[];
        return rows.length > 0 && rows.every((d) => d.last_error !== null) ? rows[0] : null;
      });
    const [inside, nowhere] = [await attempted(named.body.webhook.id), await attempted(missing.body.webhook.id)];
    // The same sentence and the same fate (retried) whether the name resolves inside or not at all:
    // the organization cannot tell which internal names exist. Why is in the log.
    expect(inside).toMatchObject({ status: "pending", attempts: 1, last_status: null, last_error: unreachableHost("private.test") });
    expect(nowhere).toMatchObject({ status: "pending", attempts: 1, last_status: null, last_error: unreachableHost("nothing-here.test") });
    await waitFor(() => logged.some((line) => line.includes("SSRF guard refused private.test") && line.includes("(private)")));
    expect(logged.some((line) => line.includes("cannot resolve nothing-here.test: nxdomain"))).toBe(true);
  });

  it("a SIEM test event to a name that resolves inside or not at all reads the same", async () => {
    const orgId = await org("SIEM names");
    const answers = [];
    for (const host of ["private.test", "nothing-here.test"]) {
      const id = await addDestination(gw, orgId, { kind: "http", url: `http://${host}:${web.httpPort}/` });
      const answer = await gw.admin("POST", `/orgs/${orgId}/siem/${id}/test`);
      expect(answer.status).toBe(502);
      answers.push(answer.body.error);
    }
    expect(answers).toEqual([
      `DeliveryError: ${unreachableHost("private.test")}`,
      `DeliveryError: ${unreachableHost("nothing-here.test")}`,
    ]);
  });

  it("what a service reached through the allowlist answers goes to the log, never to the organization", async () => {
    const orgId = await org("SIEM inside");
    const id = await addDestination(gw, orgId, { kind: "http", url: internalUrl });
    const test = await gw.admin("POST", `/orgs/${orgId}/siem/${id}/test`);
    expect(test.status).toBe(502);
    expect(test.body).toMatchObject({ reason: "delivery_failed", error: "DeliveryError: http collector answered 500" });
    expect(logged.some((line) => line.includes(INTERNAL_WORDS))).toBe(true);
    await waitFor(() => pusher.running().includes(id));
    await writeEvents(gw, orgId, 1);
    const state = await waitFor(async () => {
      const got = (await gw.admin("GET", `/orgs/${orgId}/siem/${id}`)).body.destination;
      return got.last_error !== null ? got : null;
    });
    expect(state.last_error).toBe("DeliveryError: http collector answered 500");
  });

  it("a SIEM destination outside the allowlist is refused at creation", async () => {
    const orgId = await org("SIEM refused");
    const refused = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url: "http://192.168.1.10/ingest" });
    expect(refused.body).toMatchObject({ reason: "bad_url", detail: expect.stringContaining("(private; ") });
  });
});
