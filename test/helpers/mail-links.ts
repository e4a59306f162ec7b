import type { SmtpSink } from "./smtp-sink.js";
import { waitFor } from "./gateway.js";

/** The text of a raw message as a reader sees it: quoted-printable soft breaks and escapes undone. */
export function mailText(raw: string): string {
  return raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** Every sign-in page link of a message: invitation (`#token=`) and sign-in (`#link=`) links. */
export function dashboardLinks(raw: string): string[] {
  return [...mailText(raw).matchAll(/https?:\/\/[^\s]+\/dashboard\/(?:invitation#token|signin#link)=[A-Za-z0-9_-]{43}/g)].map((m) => m[0]);
}

/** The token of a link (its fragment's value). */
export function tokenOf(link: string): string {
  return link.slice(link.lastIndexOf("=") + 1);
}

/** Waits for the next message to `to` after the first `after` messages, and returns its links. */
export async function nextLinks(smtp: SmtpSink, to: string, after: number): Promise<string[]> {
  const mail = await waitFor(() => smtp.mails.slice(after).find((m) => m.to.includes(to)));
  return dashboardLinks(mail.data);
}
