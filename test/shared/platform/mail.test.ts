/**
 * The one mailer (invitations, sign-in links, the notifier's e-mails): a recipient is a plain
 * address and the envelope's only recipient, and a failure says whether sending again can help.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMailer, isPermanentMailFailure, isPlainMailbox, type Mailer, RecipientRefused } from "../../../shared/platform/mail.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { validator } from "../../../shared/platform/validation.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";

const REFUSED = "gone@example.com";

const PLAIN = [
  "alice@example.com",
  "Ann.Lee+tag@mail.example.co.uk",
  "o'brien@example.com",
  "x@a-b.example",
  `${"l".repeat(64)}@example.com`,
];

/** Addresses a parser reads as a display name, a group, a comment, a second address or a header; and what is not a host name. */
const NOT_PLAIN = [
  "a<b>@c.example",
  '"x" <evil@attacker.example>',
  "Ann <ann@example.com>",
  "a@b.example, c@d.example",
  "a@b.example;c@d.example",
  "a@b.example (c)",
  "g: a@b.example;",
  "a@b.example\r\nBcc: c@d.example",
  "a\u0000@example.com",
  "a\u0085@example.com",
  " a@example.com",
  "a @example.com",
  '"a b"@example.com',
  "a..b@example.com",
  ".a@example.com",
  "ä@example.com",
  "a@exämple.com",
  "a@localhost",
  "a@-b.example",
  "a@b.example.",
  "a@[127.0.0.1]",
  `${"l".repeat(65)}@example.com`,
  `a@${"d".repeat(60)}.${"d".repeat(60)}.${"d".repeat(60)}.${"d".repeat(60)}.ex.example`,
  "not-an-email",
  "",
];

describe("a plain address", () => {
  it("is local@domain and nothing else, and the API's email format is the same check", () => {
    const emailFormat = validator<string>({ type: "string", format: "email" });
    for (const address of PLAIN) {
      expect(isPlainMailbox(address), address).toBe(true);
      expect(emailFormat(address).ok, address).toBe(true);
    }
    for (const address of NOT_PLAIN) {
      expect(isPlainMailbox(address), address).toBe(false);
      expect(emailFormat(address).ok, address).toBe(false);
    }
  });
});

describe("the mailer through SMTP", () => {
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

  it("names the address as the envelope's only recipient", async () => {
    rcpt.length = 0;
    await mailer.send({ to: "alice@example.com", subject: "s", text: "t" });
    expect(rcpt).toEqual(["alice@example.com"]);
    expect(smtp.mails.at(-1)?.to).toEqual(["alice@example.com"]);
    expect(smtp.mails.at(-1)?.data).toMatch(/^From: Access gateway <no-reply@gateway\.invalid>\r?$/m);
  });

  it("refuses an address that is not plain before any SMTP, as a permanent failure", async () => {
    rcpt.length = 0;
    const before = smtp.mails.length;
    for (const to of NOT_PLAIN) {
      const error = await mailer.send({ to, subject: "s", text: "t" }).catch((e: unknown) => e);
      expect(error, to).toBeInstanceOf(RecipientRefused);
      expect(isPermanentMailFailure(error)).toBe(true);
    }
    expect(rcpt).toEqual([]);
    expect(smtp.mails.length).toBe(before);
  });

  it("a recipient the relay refuses with 5xx is a permanent failure", async () => {
    const error = await mailer.send({ to: REFUSED, subject: "s", text: "t" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EENVELOPE", command: "RCPT TO", responseCode: 550 });
    expect(isPermanentMailFailure(error)).toBe(true);
  });

  it("a relay that cannot be reached is not", async () => {
    const closed = await startSmtpSink();
    await closed.stop();
    const unreachable = createMailer(`smtp://127.0.0.1:${closed.port}`, silentLogger());
    const error = await unreachable.send({ to: "alice@example.com", subject: "s", text: "t" }).catch((e: unknown) => e);
    unreachable.close();
    expect(error).toBeInstanceOf(Error);
    expect(isPermanentMailFailure(error)).toBe(false);
  });
});

describe("permanent or not", () => {
  const smtpError = (fields: Record<string, unknown>) => Object.assign(new Error("smtp"), fields);

  it("a 5xx to RCPT TO or DATA (but 503), or an envelope refused before sending, is permanent", () => {
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 550 }))).toBe(true);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 553 }))).toBe(true);
    expect(isPermanentMailFailure(smtpError({ code: "EMESSAGE", command: "DATA", responseCode: 554 }))).toBe(true);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE" }))).toBe(true);
    expect(isPermanentMailFailure(new RecipientRefused("x"))).toBe(true);
  });

  it("what a retry can cure is transient: 4xx, 503, a refused sender or login, a dropped connection", () => {
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 450 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EMESSAGE", command: "DATA", responseCode: 451 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "RCPT TO", responseCode: 503 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EENVELOPE", command: "MAIL FROM", responseCode: 550 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "EAUTH", command: "AUTH PLAIN", responseCode: 535 }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "ECONNECTION" }))).toBe(false);
    expect(isPermanentMailFailure(smtpError({ code: "ETIMEDOUT" }))).toBe(false);
    expect(isPermanentMailFailure("smtp")).toBe(false);
  });
});

describe("the mailer with SMTP_URL unset", () => {
  const logged = () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write: (chunk, _encoding, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    return { lines, mailer: createMailer(null, logger) };
  };

  it("logs the e-mail instead of sending it", async () => {
    const { lines, mailer } = logged();
    await mailer.send({ to: "alice@example.com", subject: "s", text: "t" });
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { to: "alice@example.com", subject: "s", text: "t", msg: "e-mail (SMTP_URL unset: logged, not sent)" },
    ]);
  });

  it("refuses an address that is not plain as the relay's mailer does: development shows what production would do", async () => {
    const { lines, mailer } = logged();
    const error = await mailer.send({ to: "a<b>@c.example", subject: "s", text: "t" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecipientRefused);
    expect(lines).toEqual([]);
  });
});
