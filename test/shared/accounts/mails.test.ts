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
    expect(logged.text).toContain("until 2030-01-04 12:00 UTC");
  });

  it("a sign-in e-mail for an address in several organizations names each link's organization", () => {
    const mail = signinLinkMail({
      to: "ann@example.com",
      expiresAtMs: Date.UTC(2030, 0, 1, 0, 15),
      links: [
        { orgName: "Acme", url: signinLinkUrl("https://gw.example.com", TOKEN) },
        { orgName: "Beta", url: signinLinkUrl("https://gw.example.com", "B".repeat(43)) },
      ],
    });
    expect(mail.text).toContain(`Acme:\nhttps://gw.example.com/dashboard/signin#link=${TOKEN}`);
    expect(mail.text).toContain("Beta:\n");
    expect(mail.text).toContain("until 2030-01-01 00:15 UTC");
  });
});
