import type { Mail } from "../platform/mail.js";

/**
 * The e-mails of member sign-in. The token travels in the URL fragment (`#...`): browsers
 * never send a fragment to a server, so it stays out of access logs, proxies and Referer
 * headers; the page's script reads it and posts it.
 */

export function invitationUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/dashboard/invitation#token=${token}`;
}

export function signinLinkUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/dashboard/signin#link=${token}`;
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

export function invitationMail(input: { to: string; name: string; orgName: string; role: string; url: string; expiresAtMs: number }): Mail {
  return {
    to: input.to,
    subject: `You are invited to ${input.orgName} on the access gateway`,
    text: [
      `Hello ${input.name},`,
      "",
      `You were added to ${input.orgName} as ${input.role}. Open this link to create your passkey and sign in:`,
      "",
      input.url,
      "",
      `The link works once, until ${utc(input.expiresAtMs)}. After that, ask for a sign-in link on the sign-in page.`,
      "If you did not expect this e-mail, ignore it.",
    ].join("\n"),
  };
}

export function signinLinkMail(input: { to: string; links: { orgName: string; url: string }[]; expiresAtMs: number }): Mail {
  const lines =
    input.links.length === 1
      ? [`Open this link to sign in to ${input.links[0].orgName}:`, "", input.links[0].url]
      : ["Open the link of the organization to sign in to:", ...input.links.flatMap((l) => ["", `${l.orgName}:`, l.url])];
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
