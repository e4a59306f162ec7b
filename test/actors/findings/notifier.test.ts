import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../actors/index.js";
import { startNotifier } from "../../../actors/notifier/index.js";
import { DELIVERY_POLICY } from "../../../actors/notifier/deliveries.js";
import { postJson } from "../../../actors/notifier/post.js";
import { standardWebhooksSecret } from "../../../actors/notifier/sign.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { unreachableHost } from "../../../shared/platform/net/outbound/ssrf.js";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { EVENTS_STREAM } from "../../../shared/events/stream.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";
import { addMember, assignments, scanNow, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { advance, makeKey, makeOrg, verifyDomain } from "../../ingress/routes/verify-fixtures.js";

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let gw: TestGateway;
let scanner: FakeScanner;
let relay: RunningActor;
let notifier: RunningActor;
let smtp: SmtpSink;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const held: http.ServerResponse[] = [];
/** Failures so far per delivery id: the flaky receiver fails each delivery twice. */
const flakyFailures = new Map<string, number>();
let orgA: number;
let orgB: number;
let key: string;

const SECRET = "whsec_0123456789abcdef";

beforeAll(async () => {
  smtp = await startSmtpSink();
  const smtpPort = smtp.port;

  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (req.url === "/slow") return void held.push(res);
      const id = String(req.headers["x-delivery-id"]);
      if (req.url === "/flaky" && (flakyFailures.get(id) ?? 0) < 2) {
        flakyFailures.set(id, (flakyFailures.get(id) ?? 0) + 1);
        res.writeHead(503).end("try later");
        return;
      }
      res.writeHead(req.url === "/gone" ? 410 : 200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  gw = await startTestGateway("notifier", { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  scanner = await startFakeScanner(gw);
  relay = await startOutboxRelay(gw.ctx);
  notifier = await startNotifier(gw.ctx, { policy: { ...DELIVERY_POLICY, timeoutMs: 3_000 } });
  orgA = await makeOrg(gw, { plan: "professional" });
  orgB = await makeOrg(gw, { plan: "professional" });
  await verifyDomain(gw, orgA, "a.test");
  await verifyDomain(gw, orgB, "b.test");
  await addMember(gw, orgA, "Alice", "alice@example.com");
  await addMember(gw, orgA, "Bob", "bob@example.com");
  // Adding a member e-mails its invitation (sent before the call answers): not this file's subject.
  smtp.mails.splice(0);
  key = (await makeKey(gw, orgA, { name: "Backend", kind: "server", domain: undefined })).key;
  await scanNow(gw, key, "a.test");
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await notifier?.stop();
  await relay?.stop();
  await scanner?.stop();
  await gw?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await smtp?.stop();
});

const deliveriesTo = (path: string) => received.filter((r) => r.path === path);

describe("admin webhooks", () => {
  it("adds, lists and deletes webhooks; the secret is never shown", async () => {
    for (const path of ["/ok", "/flaky"]) {
      const res = await gw.admin("POST", `/orgs/${orgA}/webhooks`, { url: `${receiverUrl}${path}`, secret: SECRET });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.webhook).toMatchObject({ url: `${receiverUrl}${path}` });
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    }
    expect((await gw.admin("POST", `/orgs/${orgB}/webhooks`, { url: `${receiverUrl}/slow`, secret: SECRET })).status).toBe(201);
    const temp = await gw.admin("POST", `/orgs/${orgA}/webhooks`, { url: `${receiverUrl}/temp`, secret: SECRET });
    const list = await gw.admin("GET", `/orgs/${orgA}/webhooks`);
    expect(list.body.webhooks).toHaveLength(3);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
    const { rows } = await gw.ctx.db.query("SELECT secret_sealed FROM webhooks");
    for (const row of rows) expect(row.secret_sealed.toString("latin1")).not.toContain(SECRET);
    expect((await gw.admin("DELETE", `/orgs/${orgA}/webhooks/${temp.body.webhook.id}`)).status).toBe(200);
    expect((await gw.admin("DELETE", `/orgs/${orgA}/webhooks/${temp.body.webhook.id}`)).status).toBe(404);
    expect((await gw.admin("DELETE", `/orgs/${orgB}/webhooks/${list.body.webhooks[0].id}`)).status).toBe(404);
  });

  it.each([
    [{ url: "ftp://example.com/x", secret: SECRET }, "bad_url"],
    [{ url: "not a url", secret: SECRET }, "bad_url"],
    [{ url: "https://user:pw@example.com/", secret: SECRET }, "bad_url"],
    [{ url: "https://example.com/", secret: "short" }, "bad_secret"],
    [{ url: "https://example.com/" }, "missing_secret"],
  ])("refuses %j with 400 %s", async (body, reason) => {
    const res = await gw.admin("POST", `/orgs/${orgA}/webhooks`, body);
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe(reason);
  });

  it("the SSRF guard refuses loopback and metadata addresses when private ones are not allowed", async () => {
    // The organization reads one sentence (and the delivery is retried, as for a name that does
    // not resolve); which kind of address it was is for the log.
    const refusal = (host: string, kind: string) => ({
      refused: false,
      error: unreachableHost(host),
      logDetail: expect.stringContaining(`(${kind})`),
    });
    const options = { timeoutMs: 1000, outbound: outboundPolicy("webhook", "none"), resolver: null, caPem: null };
    expect(await postJson(`${receiverUrl}/ok`, "{}", {}, options)).toMatchObject(refusal("127.0.0.1", "loopback"));
    expect(await postJson("http://169.254.169.254/latest", "{}", {}, options)).toMatchObject(refusal("169.254.169.254", "metadata"));
    // With an allowlist: what it lists, and nothing else (metadata never).
    const listed = { ...options, outbound: outboundPolicy("webhook", ["127.0.0.0/8", "169.254.0.0/16"]) };
    expect(await postJson("http://10.1.2.3/hook", "{}", {}, listed)).toMatchObject(refusal("10.1.2.3", "private"));
    expect(await postJson("http://[::1]:9/hook", "{}", {}, listed)).toMatchObject(refusal("::1", "loopback"));
    expect(await postJson("http://169.254.169.254/latest", "{}", {}, listed)).toMatchObject(refusal("169.254.169.254", "metadata"));
    expect(received.filter((r) => r.headers["x-event-type"] === undefined)).toHaveLength(0);
  });
});

describe("notifier", () => {
  it("e-mails the new owner and posts a signed webhook the receiver can verify", async () => {
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "alice@example.com" });
    expect(res.status).toBe(200);
    const mail = await waitFor(() => smtp.mails.find((m) => m.to.includes("alice@example.com")));
    expect(mail.to).toEqual(["alice@example.com"]);
    expect(mail.data).toContain("email:spf");
    const hook = await waitFor(() => deliveriesTo("/ok").find((r) => r.headers["x-event-type"] === "finding.assigned"));
    const timestamp = String(hook.headers["x-timestamp"]);
    const expected = `sha256=${createHmac("sha256", SECRET).update(`${timestamp}.${hook.body}`).digest("hex")}`;
    expect(hook.headers["x-signature"]).toBe(expected);
    expect(Math.abs(Number(timestamp) - gw.ctx.clock.nowSeconds())).toBeLessThanOrEqual(5);
    const body = JSON.parse(hook.body);
    expect(body.delivery_id).toBe(hook.headers["x-delivery-id"]);
    expect(hook.headers["x-event-type"]).toBe("finding.assigned");
    expect(body.event).toMatchObject({
      type: "finding.assigned",
      domain: "a.test",
      finding_key: "email:spf",
      owner: { email: "alice@example.com" },
      by: "Backend (API key)",
      automatic: false,
    });
    // A tampered body does not verify.
    expect(createHmac("sha256", SECRET).update(`${timestamp}.${hook.body} `).digest("hex")).not.toBe(expected.slice(7));
  });

  it("the same delivery verifies with the standardwebhooks package and the secret's whsec_ form", async () => {
    const hook = await waitFor(() => deliveriesTo("/ok").find((r) => r.headers["x-event-type"] === "finding.assigned"));
    const headers = {
      "webhook-id": String(hook.headers["webhook-id"]),
      "webhook-timestamp": String(hook.headers["webhook-timestamp"]),
      "webhook-signature": String(hook.headers["webhook-signature"]),
    };
    expect(headers["webhook-id"]).toBe(hook.headers["x-delivery-id"]);
    expect(headers["webhook-timestamp"]).toBe(hook.headers["x-timestamp"]);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const receiver = new Webhook(standardWebhooksSecret(SECRET));
    expect(receiver.verify(hook.body, headers)).toMatchObject({ event: { type: "finding.assigned" } });
    expect(() => receiver.verify(`${hook.body} `, headers)).toThrow();
    expect(() => new Webhook(standardWebhooksSecret(`${SECRET}x`)).verify(hook.body, headers)).toThrow();
  });

  it("a reassignment e-mails the new owner and the previous one", async () => {
    const before = smtp.mails.length;
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "bob@example.com" });
    await waitFor(() => smtp.mails.length >= before + 2);
    expect(
      smtp.mails
        .slice(before)
        .flatMap((m) => m.to)
        .sort(),
    ).toEqual(["alice@example.com", "bob@example.com"]);
  });

  it("a receiver failing twice gets the delivery on the third attempt, once per delivery id, retried with backoff", async () => {
    const flaky = await waitFor(() => deliveriesTo("/flaky")[0]);
    const firstId = flaky.headers["x-delivery-id"];
    const { rows } = await gw.ctx.db.query("SELECT id FROM webhooks WHERE url = $1", [`${receiverUrl}/flaky`]);
    const log = async () =>
      (await gw.admin("GET", `/orgs/${orgA}/webhooks/${rows[0].id}/deliveries`)).body.deliveries as {
        id: string;
        status: string;
        attempts: number;
        last_status: number;
      }[];
    await waitFor(async () => (await log()).find((d) => d.id === firstId && d.last_status === 503), 20_000);
    // Backoff 30 s, then 60 s: nothing is retried before the clock gets there.
    expect(deliveriesTo("/flaky").filter((r) => r.headers["x-delivery-id"] === firstId)).toHaveLength(1);
    await advance(gw, 31);
    // The second attempt recorded, not only claimed: a claim already counts the attempt and
    // leases the row for ~11 s, and moving the clock before its 503 is recorded would put
    // the third attempt 60 s after the move (this test's old flake, caught by the dump below).
    await waitFor(async () => {
      const {
        rows: [row],
      } = await gw.ctx.db.query("SELECT attempts, last_status, next_attempt_at FROM webhook_deliveries WHERE id = $1", [firstId]);
      return row?.attempts === 2 && row.last_status === 503 && row.next_attempt_at.getTime() > gw.ctx.clock.now() + 30_000;
    }, 20_000);
    await advance(gw, 61);
    // Every earlier test's deliveries to /flaky fall due with this one (at most 2 in flight per webhook): give the queue time.
    try {
      await waitFor(async () => (await log()).find((d) => d.id === firstId && d.status === "delivered"), 60_000);
    } catch (error) {
      // If this ever times out again, keep what the table held.
      const rows = await gw.ctx.db.query(
        "SELECT id, webhook_id, status, attempts, last_status, next_attempt_at, created_at FROM webhook_deliveries ORDER BY id",
      );
      console.error(
        `deliveries at clock ${new Date(gw.ctx.clock.now()).toISOString()}, waiting for ${firstId}:`,
        JSON.stringify(rows.rows),
      );
      throw error;
    }
    const attempts = deliveriesTo("/flaky").filter((r) => r.headers["x-delivery-id"] === firstId);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => JSON.parse(a.body).event.id)).size).toBe(1);
    const entry = (await log()).find((d) => d.id === firstId);
    expect(entry).toMatchObject({ status: "delivered", attempts: 3 });
    const list = await gw.admin("GET", `/orgs/${orgA}/webhooks`);
    expect(list.body.webhooks.find((w: { id: number }) => w.id === rows[0].id)).toMatchObject({ last_error: "HTTP 503" });
  }, 120_000);

  it("a duplicated stream entry sends no second e-mail and adds no second delivery", async () => {
    const { rows } = await gw.ctx.db.query(
      "SELECT id, type, time, domain, payload FROM events WHERE org_id = $1 AND type = 'finding.assigned' ORDER BY id LIMIT 1",
      [orgA],
    );
    const event = {
      ...rows[0].payload,
      id: Number(rows[0].id),
      type: rows[0].type,
      time: rows[0].time.toISOString(),
      domain: rows[0].domain,
    };
    const mailsBefore = smtp.mails.length;
    await publish(gw.ctx.redis, gw.ctx.keys.stream(EVENTS_STREAM), { org_id: orgA, event });
    // A later event is handled after the duplicate: once its e-mail arrives, the duplicate was handled too.
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:dmarc", owner: "alice@example.com" });
    await waitFor(() => smtp.mails.slice(mailsBefore).some((m) => m.data.includes("email:dmarc")));
    await waitFor(async () => {
      const pending = await gw.ctx.redis.xpending(gw.ctx.keys.stream(EVENTS_STREAM), "notifier");
      return Array.isArray(pending) && Number(pending[0]) === 0;
    });
    expect(smtp.mails.slice(mailsBefore).filter((m) => m.data.includes("email:spf"))).toHaveLength(0);
    const deliveries = await gw.ctx.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1", [event.id]);
    expect(deliveries.rows[0].n).toBe(2);
  });

  it("a webhook that never answers holds up neither another organization nor e-mail", async () => {
    const expires = new Date(gw.ctx.clock.now() + 30 * 86_400_000).toISOString();
    expect(
      (await gw.admin("POST", `/orgs/${orgB}/risks`, { domain: "b.test", finding_key: "email:spf", note: "n", expires_at: expires }))
        .status,
    ).toBe(201);
    await waitFor(() => deliveriesTo("/slow").length >= 1);
    const okBefore = deliveriesTo("/ok").length;
    const mailsBefore = smtp.mails.length;
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "headers:hsts", owner: "bob@example.com" });
    await waitFor(() => deliveriesTo("/ok").length > okBefore && smtp.mails.length > mailsBefore);
    expect(held.length).toBeGreaterThanOrEqual(1);
    const risk = JSON.parse(deliveriesTo("/slow")[0].body).event;
    expect(risk).toMatchObject({ type: "risk.accepted", finding_key: "email:spf", note: "n", owner: null, status: "open" });
  });
});
