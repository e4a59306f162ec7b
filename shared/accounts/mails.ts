import type { Mail } from "../platform/mail.js";
import { orgLabel, visible } from "../platform/visible.js";

/**
 * The e-mails of member sign-in. The token travels in the URL fragment (`#...`): browsers
 * never send a fragment to a server, so it stays out of access logs, proxies and Referer
 * headers; the page's script reads it and posts it.
 *
 * An organization is named with its id, `Acme (organization 12)`: anyone can make an
 * organization of any name and add any address to it, and the id is what tells two
 * organizations of one name apart. Names (the member's, the organization's) are written with
 * their invisible and reordering characters as code points (platform/visible.ts).
 */

export function invitationUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/dashboard/invitation#token=${token}`;
}

export function signinLinkUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/dashboard/signin#link=${token}`;
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

export function invitationMail(input: {
  to: string;
  name: string;
  orgName: string;
  orgId: number;
  role: string;
  url: string;
  expiresAtMs: number;
}): Mail {
  return {
    to: input.to,
    subject: `You are invited to ${visible(input.orgName)} on the access gateway`,
    text: [
      `Hello ${visible(input.name)},`,
      "",
      `You were added to ${orgLabel(input.orgName, input.orgId)} as ${input.role}. Open this link to create your passkey and sign in:`,
      "",
      input.url,
      "",
      `The link works once, until ${utc(input.expiresAtMs)}. After that, ask for a sign-in link on the sign-in page.`,
      "If you did not expect this e-mail, ignore it.",
    ].join("\n"),
  };
}

export function signinLinkMail(input: { to: string; links: { orgName: string; orgId: number; url: string }[]; expiresAtMs: number }): Mail {
  const lines =
    input.links.length === 1
      ? [`Open this link to sign in to ${orgLabel(input.links[0].orgName, input.links[0].orgId)}:`, "", input.links[0].url]
      : [
          "Open the link of the organization to sign in to:",
          ...input.links.flatMap((l) => ["", `${orgLabel(l.orgName, l.orgId)}:`, l.url]),
        ];
  return {
    to: input.to,
    subject: "Your sign-in link for the access gateway",
    text: [
      ...lines,
      "",
      `Each link works once, until ${utc(input.expiresAtMs)}. Once signed in you can add a passkey.`,
      "If you did not ask for this e-mail, ignore it: nobody can sign in without the link.",
    ].join("\n"),
  };
}
