/**
 * E-mail the relay refuses for good is not retried (it would hold one of the notifier's slots
 * through minutes of backoff), and the envelope's only recipient is the stored address itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Helpers } from "../../../actors/runtime/index.js";
import { notifierHandler } from "../../../actors/notifier/handler.js";
import { createNotifierMailer, isPermanentMailFailure, type Mailer, RecipientRefused } from "../../../actors/notifier/mail.js";
import type { EventMessage } from "../../../shared/events/index.js";
import { manualClock } from "../../../shared/platform/clock.js";
import type { Pool } from "../../../shared/platform/db/pool.js";
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
  mailer = createNotifierMailer(`smtp://127.0.0.1:${smtp.port}`, silentLogger());
});
afterAll(async () => {
  mailer?.close();
  await smtp?.stop();
});

describe("the notifier's mailer", () => {
  it("names the stored address as the envelope's only recipient", async () => {
    rcpt.length = 0;
    await mailer.send({ to: "alice@example.com", subject: "s", text: "t" });
    expect(rcpt).toEqual(["alice@example.com"]);
    expect(smtp.mails.at(-1)?.to).toEqual(["alice@example.com"]);
  });

  it("refuses an address a parser would read as a display name, before any SMTP", async () => {
    rcpt.length = 0;
    for (const to of ["a<b>@c.example", '"x" <evil@attacker.example>', "a@b.example, c@d.example", "a@b.example (c)"]) {
      const error = await mailer.send({ to, subject: "s", text: "t" }).catch((e: unknown) => e);
      expect(error, to).toBeInstanceOf(RecipientRefused);
      expect(isPermanentMailFailure(error)).toBe(true);
    }
    expect(rcpt).toEqual([]);
  });

  it("a recipient the relay refuses with 5xx is a permanent failure", async () => {
    const error = await mailer.send({ to: REFUSED, subject: "s", text: "t" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EENVELOPE", responseCode: 550 });
    expect(isPermanentMailFailure(error)).toBe(true);
  });

  it("what a retry can cure is not permanent: 4xx, 503, a refused sender or login, a dropped connection", () => {
    const smtpError = (fields: Record<string, unknown>) => Object.assign(new Error("smtp"), fields);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 450 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 503 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "MAIL FROM", responseCode: 550 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EAUTH", command: "AUTH PLAIN", responseCode: 535 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "ECONNECTION" }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EMESSAGE", command: "DATA", responseCode: 554 }))).toBe(true);
  });
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
});
