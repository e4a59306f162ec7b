/**
 * E-mail the relay refuses for good is not retried (it would hold one of the notifier's slots
 * through minutes of backoff). The mailer's own rules (a plain address, the envelope's only
 * recipient, permanent or not) are tested with it: test/shared/platform/mail.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Helpers } from "../../../actors/runtime/index.js";
import { notifierHandler } from "../../../actors/notifier/handler.js";
import type { EventMessage } from "../../../shared/events/index.js";
import { manualClock } from "../../../shared/platform/clock.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
import { createMailer, type Mailer } from "../../../shared/platform/mail.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { createTestDatabase } from "../../helpers/database.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";

const NOW = Date.UTC(2030, 0, 1, 12);
const REFUSED = "gone@example.com";

let smtp: SmtpSink;
let mailer: Mailer;
/** Every RCPT TO the relay was asked, accepted or not. */
const rcpt: string[] = [];

beforeAll(async () => {
  smtp = await startSmtpSink({
    refuse: (address) => {
      rcpt.push(address);
      return address === REFUSED;
    },
  });
  mailer = createMailer(`smtp://127.0.0.1:${smtp.port}`, silentLogger());
});
afterAll(async () => {
  mailer?.close();
  await smtp?.stop();
});

describe("the notifier's handler", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase("notifiermail");
  });
  afterAll(async () => db?.drop());

  const message: EventMessage = {
    org_id: 1,
    event: {
      id: 41,
      type: "finding.assigned",
      time: new Date(NOW).toISOString(),
      domain: "a.test",
      finding_key: "mail:spf",
      finding: "SPF",
      owner: { name: "Gone", email: REFUSED },
      previous_owner: { name: "Bob", email: "bob@example.com" },
      status: "open",
      due_at: null,
      by: "admin",
      automatic: false,
    },
  };
  const helpers = () => ({ db: db.pool, clock: manualClock(NOW), logger: silentLogger() }) as unknown as Helpers<Pool>;

  it("records a recipient refused for good, tells the others, and completes the event", async () => {
    const before = smtp.mails.length;
    await notifierHandler(mailer, () => {})(message, helpers());
    expect(smtp.mails.slice(before).map((m) => m.to)).toEqual([["bob@example.com"]]);
    const { rows } = await db.pool.query("SELECT recipient FROM notifier_mail WHERE event_id = 41 ORDER BY recipient");
    expect(rows.map((r) => r.recipient)).toEqual(["bob@example.com", REFUSED]);
    // The event seen again (at least once delivery) tries neither again.
    rcpt.length = 0;
    await notifierHandler(mailer, () => {})(message, helpers());
    expect(rcpt).toEqual([]);
  });

  it("a stored address that is not plain (added before the API held members to plain ones) is refused for good too", async () => {
    const notPlain = "a<b>@c.example";
    const stored = { ...message, event: { ...message.event, id: 42, owner: { name: "Odd", email: notPlain } } } as EventMessage;
    const before = smtp.mails.length;
    rcpt.length = 0;
    await notifierHandler(mailer, () => {})(stored, helpers());
    expect(rcpt).toEqual(["bob@example.com"]);
    expect(smtp.mails.slice(before).map((m) => m.to)).toEqual([["bob@example.com"]]);
    const { rows } = await db.pool.query("SELECT recipient FROM notifier_mail WHERE event_id = 42 ORDER BY recipient");
    expect(rows.map((r) => r.recipient)).toEqual([notPlain, "bob@example.com"]);
  });
});
