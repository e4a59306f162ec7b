import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, virtualAuthenticator } from "../helpers/passkey-browser.js";
import type { SmtpSink } from "../helpers/smtp-sink.js";
import { openDashboardWorld, type DashboardWorld, type Made, type Names } from "./fixtures.js";
import { WAIT, settled, signInWithAdminToken, visit, type Harness, type Tab } from "./harness.js";

/**
 * Outside text with teeth: markup that would run script (an `onerror` handler, a closing
 * `</script>`), a right-to-left override and control characters, put everywhere the
 * dashboard shows outside text (organization, key and member names, installation ids,
 * content, a scanned site's evidence, a probe's error, incident text). Each payload sets
 * `window.__xss` if it ever runs. The pages are walked with the page's CSP switched off,
 * so only the escaping stands between the payload and the page: nothing may run, no
 * element may come of it, and the text must be there, as text.
 *
 * Walked three times: by the operator with the admin token, by the organization's owner (her
 * own name is one of the payloads) and by a read-only `member` with the passkey sessions
 * they opened on their invitations: the payloads are data, the same whoever reads them, and
 * the owner's and the member's pages are not all the operator's (no operator page; their own
 * sessions and passkeys on Team; the member's key page has no form).
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, window: any;

const run = (tag: string) => `<img src=x onerror=window.__xss='${tag}'>`;
const closeScript = (tag: string) => `</script><script>window.__xss='${tag}'</script>`;
const RTL = "\u202E";
const CONTROLS = "\u0007\u001b[31m";

const HOSTILE: Names = {
  org: `Acme ${run("org")}`,
  clientKey: `${run("key")}${closeScript("key")}`,
  install: `${run("install")}${RTL}gnp.exe${CONTROLS}`,
  content: `${closeScript("content")}${run("content")} ${RTL}txt.exe`,
  incident: `${run("incident")} ${RTL}!tnedicni`,
  member: `${run("member")}${CONTROLS}`,
  evidence: `x-powered-by: ${closeScript("evidence")}${run("evidence")}${RTL}`,
  probeError: `refused: ${run("probe")}${closeScript("probe")}`,
};

let harness: Harness;
let world: Made;
let smtp: SmtpSink;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("hostile", HOSTILE, HOSTILE.evidence);
  ({ harness, world, smtp } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

/** What the page holds: did anything run, did any element come of a payload, and its text. */
async function inspect(tab: Tab) {
  return tab.page.evaluate(() => ({
    ran: window.__xss ?? null,
    images: document.querySelectorAll("img").length,
    scripts: [...document.querySelectorAll("script")].map((s: any) => s.getAttribute("src") ?? "inline"),
    handlers: [...document.querySelectorAll("*")].filter((e: any) => [...e.attributes].some((a: any) => a.name.startsWith("on"))).length,
    text: document.body.innerText as string,
  }));
}

/** Walks the pages that show the payloads, as whoever the tab is signed in as. */
async function walk(tab: Tab, reader: "operator" | "owner" | "member"): Promise<void> {
  const operator = reader === "operator";
  await visit(tab, `/dashboard/orgs/${world.orgId}/scans`);
  await tab.page.type("input[type=password]", world.serverKey);
  await tab.page.click("form button[type=submit].primary");
  await tab.page.waitForSelector(".key-held", WAIT);
  const org = `/dashboard/orgs/${world.orgId}`;
  // Where each payload must show up, page by page.
  const pages: [string, string[]][] = [
    ...(operator
      ? ([
          ["/dashboard/operator", [HOSTILE.org]],
          ["/dashboard/operator?tab=status", [HOSTILE.probeError]],
          ["/dashboard/operator?tab=incidents", [HOSTILE.incident]],
        ] as [string, string[]][])
      : []),
    [org, [HOSTILE.org, HOSTILE.install, HOSTILE.clientKey]],
    [`${org}/keys`, [HOSTILE.clientKey]],
    [`${org}/keys/${world.clientKeyId}`, []],
    [`${org}/keys/${world.clientKeyId}?tab=installations`, [HOSTILE.install]],
    [`${org}/content`, [HOSTILE.content]],
    [`${org}/team`, [HOSTILE.member]],
    [`${org}/scans/${world.domain}`, [HOSTILE.evidence]],
    [`${org}/activity`, [HOSTILE.clientKey]],
    [`${org}/findings`, [HOSTILE.member]],
  ];
  for (const [path, shown] of pages) {
    await visit(tab, path);
    await settled(tab.page);
    const seen = await inspect(tab);
    expect(seen.ran, path).toBeNull();
    expect(seen.images, path).toBe(0);
    expect(seen.handlers, path).toBe(0);
    expect(
      seen.scripts.filter((s) => s === "inline"),
      path,
    ).toEqual([]);
    for (const payload of shown) {
      // Shown as it is, the invisible characters as visible code points.
      const expected = payload
        .replace(/\u202E/g, "⟨U+202E⟩")
        .replace(/\u0007/g, "⟨U+0007⟩")
        .replace(/\u001b/g, "⟨U+001B⟩");
      expect(seen.text, `${path} shows ${JSON.stringify(payload)}`).toContain(expected);
    }
  }
  await visit(tab, `${org}/keys/${world.clientKeyId}`);
  if (reader === "member") {
    // Hers is read-only: the key's name is in the page's heading, as text.
    expect(await tab.page.$eval("main h1", (e: any) => e.textContent)).toContain(HOSTILE.clientKey);
  } else {
    // The key's name sits in an input as its value, and in the revoke dialog's title: text both times.
    const field = await tab.page.$eval("input", (e: any) => e.value);
    expect(field).toBe(HOSTILE.clientKey);
    await tab.page.click("button.danger");
    await tab.page.waitForSelector("dialog[open]", WAIT);
    const title = await tab.page.$eval("dialog[open] h2", (e: any) => e.textContent);
    expect(title).toContain(HOSTILE.clientKey);
  }
  expect((await inspect(tab)).ran).toBeNull();
  expect(tab.problems).toEqual([]);
  // The control: the same markup put into the page as markup does run here (the policy is
  // off), so the assertions above would have seen a payload that escaped.
  await tab.page.evaluate((markup: string) => document.body.insertAdjacentHTML("beforeend", markup), run("control"));
  await tab.page.waitForFunction(() => window.__xss === "control", WAIT);
  await tab.page.browserContext().close();
}

/** A tab (the page's policy off) signed in by the member invited at `email` (fixtures.ts): her e-mailed link and a new passkey. */
async function invited(email: string): Promise<Tab> {
  const tab = await harness.open("wide", { bypassCsp: true, site: true });
  await virtualAuthenticator(tab.page);
  const [link] = await nextLinks(smtp, email, 0);
  await acceptInvitation(tab.page, link, world.orgId);
  return tab;
}

describe("hostile outside text", () => {
  it("is shown as text on every page that shows it, and never runs: the operator", async () => {
    const tab = await harness.open("wide", { bypassCsp: true });
    await signInWithAdminToken(tab);
    await walk(tab, "operator");
  });

  it("the same for the organization's owner, signed in with her passkey session", async () => {
    await walk(await invited("ada@example.com"), "owner");
  });

  it("the same for a read-only member, signed in with her passkey session", async () => {
    await walk(await invited("grace@example.com"), "member");
  });
});
