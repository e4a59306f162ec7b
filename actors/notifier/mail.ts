/**
 * The notifier's e-mail: nodemailer through SMTP_URL (logged when it is unset, by the shared
 * mailer of shared/platform/mail.ts), with the recipient held to a plain address and named in
 * an explicit envelope, and a failure told apart as permanent or not.
 *
 * The envelope: nodemailer otherwise takes RCPT TO from the `To` header as its address parser
 * reads it, so a stored address such as `a<b>@c.example` (which the admin API's e-mail format
 * lets through) would be sent to `b`, a mailbox of the relay's own domain. An address that is
 * not a plain `local@domain` is refused before any SMTP (permanent), and the one sent is the
 * envelope's only recipient.
 */
import nodemailer from "nodemailer";
import type { Logger } from "../../shared/platform/log.js";
import { createMailer, MAIL_FROM, type Mail, type Mailer } from "../../shared/platform/mail.js";

export type { Mail, Mailer };

/** As shared/platform/mail.ts: a stalled relay fails the send instead of holding the event. */
const SMTP_TIMEOUT_MS = 15_000;

/** The address of MAIL_FROM, for MAIL FROM. */
const SENDER = /<([^>]+)>/.exec(MAIL_FROM)?.[1] ?? MAIL_FROM;

/**
 * RFC 5321 4.1.2 Mailbox with a dot-atom local part and a host-name domain: nothing an
 * address parser could read as a display name, a group, a comment or a second address.
 */
const PLAIN_MAILBOX =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** The address as the envelope's recipient, or null when it is not a plain mailbox. */
export function plainMailbox(address: string): string | null {
  const local = address.slice(0, address.lastIndexOf("@"));
  return address.length <= 254 && local.length <= 64 && PLAIN_MAILBOX.test(address) ? address : null;
}

/** A recipient address the notifier will not hand to the relay. */
export class RecipientRefused extends Error {
  override readonly name = "RecipientRefused";
}

/**
 * Whether sending this e-mail again can only fail again: the relay refused the recipient
 * (RCPT TO) or the message (DATA) with a 5xx reply (but 503, a command out of sequence), or
 * nodemailer refused the envelope before sending (EENVELOPE without a reply). A 5xx to AUTH
 * or MAIL FROM is the relay refusing the service itself (credentials, the sender address):
 * every e-mail would fail alike, so those stay retryable and the operator sees them.
 */
export function isPermanentMailFailure(error: unknown): boolean {
  if (error instanceof RecipientRefused) return true;
  if (!(error instanceof Error)) return false;
  const { code, command, responseCode } = error as { code?: unknown; command?: unknown; responseCode?: unknown };
  if (code !== "EENVELOPE" && code !== "EMESSAGE") return false;
  if (typeof responseCode !== "number") return code === "EENVELOPE";
  if (command !== "RCPT TO" && command !== "DATA") return false;
  return responseCode >= 500 && responseCode < 600 && responseCode !== 503;
}

export function createNotifierMailer(smtpUrl: string | null, logger: Logger): Mailer {
  if (smtpUrl === null) return createMailer(null, logger);
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(mail) {
      const to = plainMailbox(mail.to);
      if (to === null) throw new RecipientRefused(`not a plain e-mail address: ${JSON.stringify(mail.to)}`);
      await transport.sendMail({ from: MAIL_FROM, to, subject: mail.subject, text: mail.text, envelope: { from: SENDER, to: [to] } });
    },
    close() {
      transport.close();
    },
  };
}
