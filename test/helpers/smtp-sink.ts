import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface SmtpSink {
  port: number;
  /** Every message accepted, in order: envelope recipients and the raw message. */
  mails: { to: string[]; data: string }[];
  /** Messages received while `hold` said so, and never answered. */
  readonly held: number;
  stop(): Promise<void>;
}

/**
 * A local SMTP server (smtp-server) that keeps what it receives: the notifier's e-mails in tests.
 * While `hold()` is true a message is received but never answered (the sender waits, as on a
 * stalled mail server). A recipient `refuse` names is rejected at RCPT TO with 550, as a relay
 * refuses a mailbox for good.
 */
export async function startSmtpSink(options: { hold?: () => boolean; refuse?: (address: string) => boolean } = {}): Promise<SmtpSink> {
  const mails: SmtpSink["mails"] = [];
  let held = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!options.refuse?.(address.address)) return callback();
      callback(Object.assign(new Error("5.1.1 mailbox unavailable"), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (options.hold?.()) {
          held++;
          return;
        }
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    get held() {
      return held;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
