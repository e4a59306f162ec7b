import nodemailer from "nodemailer";
import type { Logger } from "./log.js";
import { isPlainMailbox } from "./mailbox.js";

export { isPlainMailbox };

/**
 * Every e-mail the gateway sends (the ingress's invitations and sign-in links, the notifier's
 * finding and installation e-mails), through one mailer: nodemailer through SMTP_URL, or
 * logged when it is unset (operator-api.md section 1), so a development setup shows what
 * would have gone out.
 *
 * A recipient is held to a plain `local@domain` address and is the envelope's only
 * recipient. Otherwise nodemailer takes RCPT TO from the `To` header as its address parser
 * reads it: `a<b>@c.example` would go to `b`, a mailbox of the relay's own domain, and
 * `a@b.example, c@d.example` to both. The admin API's `email` format is this same check
 * (platform/validation.ts), so such an address is refused when a member is added; one stored
 * before that is refused here, before any SMTP, as a permanent failure.
 */

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /**
   * Resolves once the SMTP server accepted the message (or it was logged); rejects when it
   * did not. isPermanentMailFailure tells the caller whether sending again can help.
   */
  send(mail: Mail): Promise<void>;
  close(): void;
}

const SENDER = "no-reply@gateway.invalid";
const MAIL_FROM = `Access gateway <${SENDER}>`;
/** A stalled relay fails the send instead of holding the request or the event. */
const SMTP_TIMEOUT_MS = 15_000;

/** A recipient address the mailer will not hand to the relay (or write to the log as sent). */
export class RecipientRefused extends Error {
  override readonly name = "RecipientRefused";
}

/**
 * Whether sending this e-mail again can only fail again: the address is not a plain mailbox,
 * the relay refused the recipient (RCPT TO) or the message (DATA) with a 5xx reply (but 503,
 * a command out of sequence), or nodemailer refused the envelope before sending (EENVELOPE
 * without a reply). A 5xx to AUTH or MAIL FROM is the relay refusing the service itself
 * (credentials, the sender address): every e-mail would fail alike, so those stay retryable
 * and the operator sees them. So do a 4xx and a lost connection.
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

function plainRecipient(mail: Mail): string {
  if (!isPlainMailbox(mail.to)) throw new RecipientRefused(`not a plain e-mail address: ${JSON.stringify(mail.to)}`);
  return mail.to;
}

export function createMailer(smtpUrl: string | null, logger: Logger): Mailer {
  if (smtpUrl === null) {
    return {
      async send(mail) {
        const to = plainRecipient(mail);
        logger.info({ to, subject: mail.subject, text: mail.text }, "e-mail (SMTP_URL unset: logged, not sent)");
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(mail) {
      const to = plainRecipient(mail);
      await transport.sendMail({ from: MAIL_FROM, to, subject: mail.subject, text: mail.text, envelope: { from: SENDER, to: [to] } });
    },
    close() {
      transport.close();
    },
  };
}
