import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../actors/index.js";
import { startNotifier } from "../../../actors/notifier/index.js";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import { runActor, type ActorHandle } from "../../../actors/runtime/index.js";
import { applyUsageMessages } from "../../../actors/usage/handler.js";
import { usageActor } from "../../../actors/usage/index.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";
import { advance, clientSetup, makeKey, verify, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The owner hears about a pending installation (docs/events.md, "installation.pending"):
 * the usage actor, the outbox relay and the notifier run as in production, against the
 * SMTP sink and a loopback webhook receiver. One pending installation: one e-mail to each
 * owner and admin, one signed webhook, one activity row; calling again tells nobody again.
 */

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

const SECRET = "whsec_pending_0123456789";
let gw: TestGateway;
let smtp: SmtpSink;
let receiver: http.Server;
let usage: ActorHandle;
let relay: RunningActor;
let notifier: RunningActor;
const received: Received[] = [];
let made: MadeKey;
let serverKey: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  // The webhook receiver is on loopback: SCAN_ALLOW_PRIVATE opens it to webhooks here, OUTBOUND_ALLOW_CIDRS where that guards them.
  gw = await startTestGateway("pendingnotice", {
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    SCAN_ALLOW_PRIVATE: "1",
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
  });
  usage = await runActor(usageActor, {
    redis: gw.ctx.redis,
    keys: gw.ctx.keys,
    clock: gw.ctx.clock,
    logger: silentLogger(),
    db: gw.ctx.db,
    consumerName: "test-pending",
  });
  relay = await startOutboxRelay(gw.ctx);
  notifier = await startNotifier(gw.ctx);

  made = await clientSetup(gw, {}, { plan: "professional" });
  serverKey = (await makeKey(gw, made.orgId, { name: "Backend", kind: "server", domain: undefined })).key;
  for (const [name, email, role] of [
    ["Olive Owner", "olive@example.com", "owner"],
    ["Adam Admin", "adam@example.com", "admin"],
    ["Mia Member", "mia@example.com", "member"],
  ]) {
    const added = await gw.admin("POST", `/orgs/${made.orgId}/members`, { name, email, role });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
  }
  const hook = await gw.admin("POST", `/orgs/${made.orgId}/webhooks`, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    secret: SECRET,
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
});

afterAll(async () => {
  await notifier?.stop();
  await relay?.stop();
  await usage?.stop({ timeoutMs: 2000 });
  await gw?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await smtp?.stop();
});

/** A message as its reader sees it: quoted-printable soft breaks and escapes undone, RFC 2047 subject words decoded. */
function readable(data: string): string {
  const words = data.replace(/=\?UTF-8\?Q\?([^?]*)\?=\s*/gi, (_, word: string) => word.replace(/_/g, " "));
  const bytes = words.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

/** E-mails about a pending installation (other e-mails, e.g. invitations, are not counted). */
const pendingMails = () =>
  smtp.mails.map((m) => ({ to: m.to, text: readable(m.data) })).filter((m) => m.text.includes("waits for approval"));
const pendingHooks = () => received.filter((r) => r.headers["x-event-type"] === "installation.pending");

async function countWhere(sql: string, args: unknown[]): Promise<number> {
  return (await gw.ctx.db.query(sql, args)).rowCount ?? 0;
}

/** How many calls of the key the usage actor has applied with this reason. */
async function applied(reason: string): Promise<number> {
  const { rows } = await gw.ctx.db.query<{ n: number }>(
    "SELECT coalesce(sum(calls), 0)::int AS n FROM usage_daily WHERE key_id = $1 AND reason = $2",
    [made.id, reason],
  );
  return rows[0].n;
}

describe("installation.pending", () => {
  it("the first time an installation waits: one e-mail to each owner and admin, one signed webhook, one activity row", async () => {
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-a" })).body.reason).toBe("ok");
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-b" })).body.reason).toBe("installation_pending");

    await waitFor(() => pendingMails().length >= 2 && pendingHooks().length >= 1, 20_000);
    const mails = pendingMails();
    expect(mails.flatMap((m) => m.to).sort()).toEqual(["adam@example.com", "olive@example.com"]);
    for (const mail of mails) {
      expect(mail.text).toContain('Subject: [example.com] New installation "site-b" waits for approval');
      expect(mail.text).toContain(
        `Key "Site" (id ${made.id}, prefix ${made.key.slice(0, 12)}) of example.com was called from a new installation, "site-b".`,
      );
      expect(mail.text).toContain(`/admin/v1/keys/${made.id}/installations/`);
    }

    const [hook] = pendingHooks();
    const timestamp = String(hook.headers["x-timestamp"]);
    const expected = `sha256=${createHmac("sha256", SECRET).update(`${timestamp}.${hook.body}`).digest("hex")}`;
    expect(hook.headers["x-signature"]).toBe(expected);
    const body = JSON.parse(hook.body);
    expect(body.event).toMatchObject({
      type: "installation.pending",
      domain: "example.com",
      install: "site-b",
      key_id: made.id,
      key_name: "Site",
      key_prefix: made.key.slice(0, 12),
    });
    expect(body.delivery_id).toBe(hook.headers["x-delivery-id"]);

    const { rows } = await gw.ctx.db.query(
      "SELECT who, grp, action, action_code, domain, detail FROM activity WHERE org_id = $1 AND action_code = 'installation.pending'",
      [made.orgId],
    );
    expect(rows).toEqual([
      {
        who: "system",
        grp: "trust",
        action: 'Installation site-b of key "Site" waits for approval',
        action_code: "installation.pending",
        domain: "example.com",
        detail: { key_id: made.id, install: "site-b" },
      },
    ]);
    // In the feed as well, as an addition feed clients may ignore.
    const feed = await gw.call("/api/v1/events.php", { query: { key: serverKey, type: "installation.pending" } });
    expect(feed.status).toBe(200);
    expect(feed.body).toMatchObject({ type: "installation.pending", install: "site-b", key_id: made.id });
    // The approved first installation was never announced.
    expect(await countWhere("SELECT 1 FROM installation_notices WHERE key_id = $1", [made.id])).toBe(1);
  });

  it("the same installation called again, sighted a minute later, or its usage redelivered: nothing more", async () => {
    const before = await applied("installation_pending");
    for (let i = 0; i < 3; i++)
      expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-b" })).body.reason).toBe("installation_pending");
    await advance(gw, 60);
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-b" })).body.reason).toBe("installation_pending");
    // A second recording of the same installation (as after a Redis loss forgot it), sent as the counting script would.
    const at = gw.ctx.clock.now();
    const cycle = (
      await gw.ctx.db.query<{ cycle_start: Date }>(
        "SELECT cycle_start FROM cycle_usage WHERE org_id = $1 ORDER BY cycle_start DESC LIMIT 1",
        [made.orgId],
      )
    ).rows[0].cycle_start.getTime();
    await gw.ctx.redis.xadd(
      gw.ctx.keys.usageStreamOf(made.orgId),
      "*",
      "data",
      JSON.stringify({
        at,
        day: new Date(at).toISOString().slice(0, 10),
        events: [
          {
            org: made.orgId,
            key: made.id,
            endpoint: "verify",
            reason: "installation_pending",
            counted: 1,
            cycle,
            n: 1,
            install: "site-b",
            install_status: "pending",
            install_new: 1,
          },
        ],
      }),
    );
    // Once the usage actor has applied all five, anything it would have announced is in the events table.
    await waitFor(async () => (await applied("installation_pending")) >= before + 5, 20_000);
    // The very message that recorded site-b, delivered again (at-least-once streams): applied before, so nothing.
    const stream = gw.ctx.keys.usageStreamOf(made.orgId);
    const recorded = (await gw.ctx.redis.xrange(stream, "-", "+")).find(
      ([, fields]) => fields[1].includes('"install_new":1') && fields[1].includes('"site-b"'),
    );
    expect(recorded).toBeDefined();
    const [messageId, fields] = recorded ?? ["", []];
    expect(await applyUsageMessages(gw.ctx.db, [{ batch: JSON.parse(fields[1]), stream, messageId }])).toEqual([false]);
    expect(await countWhere("SELECT 1 FROM events WHERE org_id = $1 AND type = 'installation.pending'", [made.orgId])).toBe(1);
    expect(await countWhere("SELECT 1 FROM activity WHERE org_id = $1 AND action_code = 'installation.pending'", [made.orgId])).toBe(1);
    expect(pendingMails()).toHaveLength(2);
    expect(pendingHooks()).toHaveLength(1);
  });

  it("another new installation is told on its own", async () => {
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-c" })).body.reason).toBe("installation_pending");
    await waitFor(() => pendingMails().length >= 4 && pendingHooks().length >= 2, 20_000);
    expect(
      pendingMails()
        .slice(2)
        .every((m) => m.text.includes('"site-c"')),
    ).toBe(true);
    expect(JSON.parse(pendingHooks()[1].body).event.install).toBe("site-c");
    expect(await countWhere("SELECT 1 FROM activity WHERE org_id = $1 AND action_code = 'installation.pending'", [made.orgId])).toBe(2);
  });
});
