import nodemailer from "nodemailer";
import type { Logger } from "./log.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the SMTP server accepted the message; rejects when it did not (the caller decides: the notifier retries the event). */
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** The sender address of every e-mail. */
export const MAIL_FROM = "Access gateway <no-reply@gateway.invalid>";
const SMTP_TIMEOUT_MS = 15_000;

/**
 * E-mail through SMTP_URL with nodemailer; with no SMTP_URL the e-mail is logged instead
 * (operator-api.md section 1), so a development setup shows what would have gone out.
 */
export function createMailer(smtpUrl: string | null, logger: Logger): Mailer {
  if (smtpUrl === null) {
    return {
      async send(mail) {
        logger.info({ to: mail.to, subject: mail.subject, text: mail.text }, "e-mail (SMTP_URL unset: logged, not sent)");
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
      await transport.sendMail({ from: MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text });
    },
    close() {
      transport.close();
    },
  };
}
