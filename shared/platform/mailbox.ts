/**
 * The one rule for a member's e-mail address: the admin API's `email` format (validation.ts)
 * and the mailer (mail.ts) both apply it, so an address the API takes is one the mailer will
 * send to. Kept apart from the mailer so checking an address loads no SMTP client.
 */

/**
 * RFC 5321 4.1.2 Mailbox with a dot-atom local part and a host-name domain: nothing an
 * address parser could read as a display name, a group, a comment or a second address, and
 * no space or control character.
 */
const PLAIN_MAILBOX =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Whether the address is a plain mailbox (RFC 5321 limits: 254 characters, a local part of 64). */
export function isPlainMailbox(address: string): boolean {
  return address.length <= 254 && address.lastIndexOf("@") <= 64 && PLAIN_MAILBOX.test(address);
}
