import { writeFile } from "node:fs/promises";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELAY_BATCH } from "../../actors/outbox/index.js";
import { publish } from "../../shared/platform/streams/envelope.js";
import { insertEvent, OUTBOX_CHANNEL } from "../../shared/events/db/events.js";
import { startFakeHttp, type FakeHttp } from "../fixtures/siem/collectors.js";
import { startDnsServer, type FixtureDns } from "../fixtures/scanner/dns-server.js";
import { startWebServers, type FixtureWeb } from "../fixtures/scanner/web-servers.js";
import { waitFor } from "../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { startFaultGateway, type FaultGateway } from "./gateway.js";
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from "./services.js";

/**
 * The findings and status actors SIGKILLed mid-message or mid-run, each as its own OS
 * process: the restarted process (or the other consumer) claims and finishes the work, and
 * nothing the design promises once (docs/findings.md, docs/status.md) happens twice.
 * ACTOR_CLAIM_IDLE_MS=2000 makes a dead consumer's entries claimable after 2 s instead of 30-60 s.
 */

let redis: PrivateRedis;
let postgres: PrivatePostgres;
let gw: FaultGateway;
let db: pg.Pool;
let smtp: SmtpSink;
let receiver: http.Server;
let receiverUrl: string;
let dns: FixtureDns;
let web: FixtureWeb;
let webProxy: net.Server;
let orgId: number;

/** While set, the SMTP sink never answers DATA, the webhook receiver never answers, the web proxy never forwards. */
const hold = { mail: false, hook: false, web: false };
/** Accepted e-mails as "recipients event-id". */
const mailsAccepted = () => smtp.mails.map((m) => `${m.to.join(",")} ${/Event (\d+)/.exec(m.data)?.[1]}`);
const hooksAccepted: string[] = [];
let hooksHeld = 0;
let webHeld = 0;
let probesHeld = 0;
let probesAnswered = 0;

async function webhookReceiver(): Promise<void> {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/status") {
        if (hold.web) return void probesHeld++;
        probesAnswered++;
        return void res.writeHead(200).end("up");
      }
      if (hold.hook) return void hooksHeld++;
      hooksAccepted.push(String(req.headers["x-delivery-id"]));
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}

/** SCAN_HTTP_PORT: forwards to the fixture web server, or holds the connection while hold.web. */
async function heldWebProxy(target: number): Promise<number> {
  webProxy = net.createServer((socket) => {
    socket.on("error", () => {});
    if (hold.web) {
      webHeld++;
      return;
    }
    const upstream = net.connect(target, "127.0.0.1");
    upstream.on("error", () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => webProxy.listen(0, "127.0.0.1", resolve));
  return (webProxy.address() as AddressInfo).port;
}

beforeAll(async () => {
  [redis, postgres, dns, web] = await Promise.all([privateRedis(), privatePostgres(), startDnsServer(), startWebServers()]);
  let httpPort: number;
  [smtp, httpPort] = await Promise.all([startSmtpSink({ hold: () => hold.mail }), heldWebProxy(web.httpPort), webhookReceiver()]);
  const smtpPort = smtp.port;
  const caFile = join(tmpdir(), `faults-ca-${process.pid}.pem`);
  await writeFile(caFile, web.caPem);
  gw = await startFaultGateway(redis, postgres, [], {
    ACTOR_CLAIM_IDLE_MS: "2000",
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    // The scanner's private reach is for tests only (not with GATEWAY_ENV=production); the
    // webhook receiver and the SIEM collector sit on loopback, listed for them.
    GATEWAY_ENV: "test",
    SCAN_ALLOW_PRIVATE: "1",
    PROBE_ALLOW_PRIVATE: "1",
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    DNS_RESOLVER: `${dns.host}:${dns.port}`,
    SCAN_HTTP_PORT: String(httpPort),
    SCAN_HTTPS_PORT: String(web.httpsPort),
    SCAN_CA_FILE: caFile,
    STATUS_PROBE_INTERVAL_S: "10",
    STATUS_PROBE_TIMEOUT_MS: "60000",
  });
  db = new pg.Pool({ connectionString: gw.databaseUrl, max: 2 });
  db.on("error", () => {});
  const org = await gw.admin("POST", "/orgs", { name: "Faults", plan: "enterprise" });
  orgId = org.body.org.id as number;
}, 90_000);

afterAll(async () => {
  await db?.end();
  await gw?.stop();
  await Promise.all([
    redis?.stop(),
    postgres?.stop(),
    dns?.stop(),
    web?.stop(),
    smtp?.stop(),
    new Promise<void>((r) => receiver?.close(() => r())),
    new Promise<void>((r) => webProxy?.close(() => r())),
  ]);
});

/** Entries of `group` still pending (delivered, not acknowledged) on `stream`. */
async function pending(stream: string, group: string): Promise<number> {
  const reply = (await redis.client().xpending(`gw:stream:${stream}`, group)) as [number, ...unknown[]];
  return Number(reply[0]);
}

describe("notifier SIGKILLed while an e-mail and a webhook are in flight", () => {
  it("the next notifier sends the e-mail once and the webhook is accepted once", async () => {
    const hook = await gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: `${receiverUrl}/hook`, secret: "whsec_0123456789abcdef" });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await gw.start("outbox");
    await gw.start("notifier", "notifier-a");
    hold.mail = true;
    hold.hook = true;
    const eventId = await pg_transaction((tx) =>
      insertEvent(tx, {
        orgId,
        type: "finding.status_changed",
        timeMs: Date.now(),
        domain: "faults.example",
        payload: {
          finding: "SPF record",
          finding_key: "email:spf",
          status: "in_progress",
          due_at: null,
          from: "open",
          by: "ops",
          owner: { name: "Ada", email: "ada@faults.example" },
        },
      }),
    );
    // Mid-message: the SMTP server has the mail but has not accepted it; the receiver has the post.
    await waitFor(() => smtp.held === 1 && hooksHeld === 1, 20_000, 20);
    await gw.kill("notifier-a");
    hold.mail = false;
    hold.hook = false;
    await gw.start("notifier", "notifier-b");
    // The e-mail after the stream entry is claimed (2 s); the webhook after its lease runs out (25 s).
    await waitFor(() => mailsAccepted().length >= 1 && hooksAccepted.length >= 1, 60_000, 100);
    await waitFor(async () => (await pending("events", "notifier")) === 0, 20_000, 100);
    // The receiver has the post before the notifier has its answer and records it: wait for the record.
    const statuses = async () => (await db.query<{ status: string }>("SELECT status FROM webhook_deliveries")).rows.map((r) => r.status);
    await waitFor(async () => (await statuses()).every((status) => status !== "pending"), 20_000, 100);
    expect(await statuses()).toEqual(["delivered"]);
    expect(mailsAccepted()).toEqual([`ada@faults.example ${eventId}`]);
    expect(hooksAccepted).toHaveLength(1);
    await gw.kill("notifier-b");
    await gw.admin("DELETE", `/orgs/${orgId}/webhooks/${hook.body.webhook.id}`);
  }, 90_000);
});

async function pg_transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

describe("outbox relay SIGKILLed mid-run", () => {
  it("the restarted relay publishes every event; a repeat is at most the batch in flight", async () => {
    await gw.kill("outbox");
    const before = await redis.client().xlen("gw:stream:events");
    const total = 20_000;
    await db.query(
      `WITH e AS (INSERT INTO events (org_id, type, time, domain, payload)
         SELECT $1, 'scan.completed', now(), 'bulk.example', '{}'::jsonb FROM generate_series(1, $2) RETURNING id, org_id)
       INSERT INTO event_outbox (event_id, org_id) SELECT id, org_id FROM e`,
      [orgId, total],
    );
    await gw.start("outbox", "outbox-a");
    await waitFor(async () => (await redis.client().xlen("gw:stream:events")) > before, 20_000, 5);
    await gw.kill("outbox-a");
    const { rows: left } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox");
    expect(left[0].n).toBeGreaterThan(0); // killed mid-run, not after it
    await gw.start("outbox", "outbox-b");
    await waitFor(async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox")).rows[0].n === 0, 60_000, 100);
    const entries = await redis.client().xrange("gw:stream:events", "-", "+");
    const ids = entries
      .slice(before)
      .map(([, fields]) => (JSON.parse(fields[fields.indexOf("data") + 1]) as { event: { id: number } }).event.id);
    expect(new Set(ids).size).toBe(total);
    expect(ids.length - total).toBeLessThanOrEqual(RELAY_BATCH);
    await gw.kill("outbox-b");
  }, 90_000);
});

describe("scanner SIGKILLed mid-scan", () => {
  it("the other scanner claims the job and stores it once", async () => {
    await gw.start("scanner", "scanner-a");
    hold.web = true;
    const jobId = "faults-scan-0001";
    await publish(redis.client(), "gw:stream:scan", { job_id: jobId, org_id: orgId, domain: "good.test", trigger: "monitor" });
    await waitFor(() => webHeld > 0, 20_000, 10);
    await gw.kill("scanner-a");
    hold.web = false;
    await gw.start("scanner", "scanner-b");
    await waitFor(async () => (await db.query("SELECT 1 FROM scans WHERE job_id = $1", [jobId])).rowCount === 2, 60_000, 100);
    await waitFor(async () => (await pending("scan", "scanner")) === 0, 20_000, 100);
    const { rows } = await db.query<{ kind: string; n: number }>(
      "SELECT kind, count(*)::int AS n FROM scans WHERE job_id = $1 GROUP BY kind ORDER BY kind",
      [jobId],
    );
    expect(rows).toEqual([
      { kind: "dns", n: 1 },
      { kind: "web", n: 1 },
    ]);
    const events = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE type = 'scan.completed' AND domain = 'good.test'",
    );
    expect(events.rows[0].n).toBe(2);
    await gw.kill("scanner-b");
  }, 90_000);
});

describe("status prober SIGKILLed mid-check", () => {
  it("a second prober records the next slot; no slot is recorded twice", async () => {
    const put = await gw.admin("PUT", "/status/services/website", { name: "Website", url: `${receiverUrl}/status` });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    hold.web = true;
    await gw.start("prober", "prober-a");
    await waitFor(() => probesHeld > 0, 20_000, 10);
    await gw.kill("prober-a");
    hold.web = false;
    await gw.start("prober", "prober-b");
    await gw.start("prober", "prober-c");
    // The killed check's slot stays leased (its check is lost); the next slot is checked by one of b and c.
    await waitFor(async () => (await db.query("SELECT 1 FROM probes WHERE service = 'website'")).rowCount === 1, 30_000, 100);
    await Promise.all([gw.kill("prober-b"), gw.kill("prober-c")]);
    const dup = await db.query("SELECT slot_at FROM probes GROUP BY service, slot_at HAVING count(*) > 1");
    expect(dup.rowCount).toBe(0);
    // Every answered check is one row: two live probers never checked the same slot.
    const recorded = await db.query("SELECT 1 FROM probes WHERE service = 'website'");
    expect(probesAnswered).toBe(recorded.rowCount);
  }, 60_000);
});

describe("SIEM pusher SIGKILLed mid-batch", () => {
  it("the restarted pushers deliver every event; two side by side deliver each once", async () => {
    const collector: FakeHttp = await startFakeHttp();
    try {
      const made = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url: collector.url });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const destination = made.body.destination.id as number;
      await gw.start("outbox", "outbox-siem");
      collector.mode = "hang";
      await gw.start("siem", "siem-a");
      const write = async (n: number) => {
        const { rows } = await db.query<{ id: string }>(
          `WITH e AS (INSERT INTO events (org_id, type, time, domain, payload)
             SELECT $1, 'scan.completed', now(), 'siem.example', '{"kind":"web"}'::jsonb FROM generate_series(1, $2) RETURNING id, org_id),
           o AS (INSERT INTO event_outbox (event_id, org_id) SELECT id, org_id FROM e)
           SELECT id FROM e`,
          [orgId, n],
        );
        await db.query("SELECT pg_notify($1, '')", [OUTBOX_CHANNEL]);
        return rows.map((r) => Number(r.id));
      };
      const before = await write(300);
      // Mid-batch: the pusher sent a batch and waits for the collector's answer.
      await waitFor(() => collector.hanging > 0, 30_000, 20);
      await gw.kill("siem-a");
      expect(collector.stored.size).toBe(0);
      collector.mode = "ok";
      await gw.start("siem", "siem-b");
      await gw.start("siem", "siem-c");
      const after = await write(300);
      const all = [...before, ...after];
      await waitFor(() => all.every((id) => (collector.stored.get(id) ?? 0) >= 1), 60_000, 100);
      await waitFor(async () => (await pending(`events:siem:${destination}`, "siem")) === 0, 30_000, 100);
      // Never zero times; the hung batch was never stored, so every event exactly once.
      expect(all.filter((id) => collector.stored.get(id) !== 1)).toEqual([]);
      await Promise.all([gw.kill("siem-b"), gw.kill("siem-c"), gw.kill("outbox-siem")]);
    } finally {
      await collector.close();
    }
  }, 120_000);
});
