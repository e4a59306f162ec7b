import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { invitationMail, invitationUrl, signinLinkMail, signinLinkUrl } from "../../../shared/accounts/mails.js";
import { createMailer } from "../../../shared/platform/mail.js";

const TOKEN = "A".repeat(43);

describe("sign-in e-mails", () => {
  it("with SMTP_URL unset the invitation is logged, link and all, not sent", async () => {
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
    const url = invitationUrl("http://localhost:8080", TOKEN);
    expect(url).toBe(`http://localhost:8080/dashboard/invitation#token=${TOKEN}`);
    await createMailer(null, logger).send(
      invitationMail({
        to: "ann@example.com",
        name: "Ann",
        orgName: "Acme",
        orgId: 7,
        role: "owner",
        url,
        expiresAtMs: Date.UTC(2030, 0, 4, 12, 0),
      }),
    );
    expect(lines).toHaveLength(1);
    const logged = JSON.parse(lines[0]);
    expect(logged).toMatchObject({
      to: "ann@example.com",
      subject: "You are invited to Acme on the access gateway",
      msg: "e-mail (SMTP_URL unset: logged, not sent)",
    });
    expect(logged.text).toContain(url);
    expect(logged.text).toContain("You were added to Acme (organization 7) as owner.");
    expect(logged.text).toContain("until 2030-01-04 12:00 UTC");
  });

  it("a sign-in e-mail for an address in several organizations names each link's organization, with its id", () => {
    const mail = signinLinkMail({
      to: "ann@example.com",
      expiresAtMs: Date.UTC(2030, 0, 1, 0, 15),
      links: [
        { orgName: "Acme", orgId: 3, url: signinLinkUrl("https://gw.example.com", TOKEN) },
        { orgName: "Beta", orgId: 12, url: signinLinkUrl("https://gw.example.com", "B".repeat(43)) },
      ],
    });
    expect(mail.text).toContain(`Acme (organization 3):\nhttps://gw.example.com/dashboard/signin#link=${TOKEN}`);
    expect(mail.text).toContain("Beta (organization 12):\n");
    expect(mail.text).toContain("until 2030-01-01 00:15 UTC");
    const one = signinLinkMail({ to: "ann@example.com", expiresAtMs: 0, links: [{ orgName: "Victim Corp", orgId: 12, url: "u" }] });
    expect(one.text).toContain("Open this link to sign in to Victim Corp (organization 12):\n\nu");
  });

  it("names chosen by others cannot reorder or add to the e-mail's text: controls and bidi characters are shown as code points", () => {
    // "Victim Corp" with a right-to-left override hiding its real end, and a line break that
    // would add a line of its own to the e-mail.
    const orgName = "Victim Corp\u202e21 noitazinagro\u202c\n\nhttps://evil.example/";
    const signin = signinLinkMail({ to: "ann@example.com", expiresAtMs: 0, links: [{ orgName, orgId: 99, url: "u" }] });
    expect(signin.text).toContain(
      "sign in to Victim Corp⟨U+202E⟩21 noitazinagro⟨U+202C⟩⟨U+000A⟩⟨U+000A⟩https://evil.example/ (organization 99):",
    );
    const invitation = invitationMail({
      to: "ann@example.com",
      name: "Ann\u2066\u200f",
      orgName,
      orgId: 99,
      role: "owner",
      url: "u",
      expiresAtMs: 0,
    });
    expect(invitation.subject).toBe(
      "You are invited to Victim Corp⟨U+202E⟩21 noitazinagro⟨U+202C⟩⟨U+000A⟩⟨U+000A⟩https://evil.example/ on the access gateway",
    );
    expect(invitation.text).toContain("Hello Ann⟨U+2066⟩⟨U+200F⟩,");
    for (const text of [signin.text, invitation.text, invitation.subject])
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });
});
