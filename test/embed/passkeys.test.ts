import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type HTTPResponse, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localTime, utcTime } from "../../dashboard/src/time.js";
import { buildSigninScript } from "../../ops/embed/build.js";
import { buildDashboard } from "../../ops/embed/dashboard-build.js";
import { EMBED_DIR } from "../../shared/embed/asset.js";
import { DASHBOARD_DIR } from "../../shared/embed/dashboard-asset.js";
import { REASONS } from "../../shared/platform/reasons.js";
import { WAIT } from "../helpers/browser-wait.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";
import { nextLinks } from "../helpers/mail-links.js";
import { answerChecker } from "../helpers/openapi.js";
import {
  type Authenticator,
  dashboardAt,
  LOCALHOST_RESOLVER,
  pageState,
  siteOf,
  virtualAuthenticator,
} from "../helpers/passkey-browser.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";

/**
 * Passkeys end to end, and the way into the dashboard: Debian's chromium (headless, puppeteer-core) with a CDP virtual
 * authenticator (ctap2, internal, resident keys, user verification) on the sign-in and
 * invitation pages the ingress serves, against the real gateway, PostgreSQL, Redis and an
 * SMTP sink. SITE_URL is http://localhost:PORT: WebAuthn needs a secure context, which
 * http://localhost is and http://127.0.0.1 is too, but an RP ID must be a domain name, not an
 * IP address, so 127.0.0.1 could not be the relying party. A sign-in on these pages sends the
 * member on to the dashboard (the SPA at /dashboard), which resumes the session and acts with
 * its CSRF token; coming back to /dashboard/signin shows the member's passkeys and sessions.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs (see botcheck-widget.test.ts).
declare const document: any, window: any;

const OWNER = { name: "Olga Owner", email: "olga@example.com" };

let gw: TestGateway;
let smtp: SmtpSink;
let browser: Browser;
let site: string;
let orgId: number;
/** What the pages received from /admin/v1/, checked against the admin OpenAPI document as gw.call checks its own (docs/api.md). */
let checkAnswer: ReturnType<typeof answerChecker>;
const answers = { checked: 0, signin: 0, mismatches: [] as string[] };

beforeAll(async () => {
  await buildSigninScript(EMBED_DIR);
  await buildDashboard(DASHBOARD_DIR);
  smtp = await startSmtpSink();
  gw = await startTestGateway("passkeys", { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  site = siteOf(gw);
  expect(site).toMatch(/^http:\/\/localhost:\d+$/);
  checkAnswer = answerChecker(site);
  orgId = (await gw.admin("POST", "/orgs", { name: "Passkey Org" })).body.org.id;
  browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", LOCALHOST_RESOLVER, "--lang=en-US"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await smtp?.stop();
});

interface Device extends Authenticator {
  page: Page;
  violations(): Promise<string[]>;
}

async function checkPageAnswer(response: HTTPResponse): Promise<void> {
  const url = new URL(response.url());
  if (url.origin !== site || !url.pathname.startsWith("/admin/v1/")) return;
  let text: string;
  try {
    text = await response.text();
  } catch {
    return; // the body went with the page that asked (a navigation)
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: the checker says whether the document expects JSON */
  }
  const method = response.request().method();
  const mismatch = checkAnswer(method, `${url.pathname}${url.search}`, response.status(), body, response.headers()["content-type"] ?? "");
  answers.checked++;
  if (url.pathname.startsWith("/admin/v1/auth/")) answers.signin++;
  if (mismatch !== null) answers.mismatches.push(mismatch);
}

/** A sign-in link's token for Olga, asked for as a member would (peeking does not spend it). */
async function liveLinkToken(): Promise<string> {
  const before = smtp.mails.length;
  expect((await gw.call("/admin/v1/auth/signin/link", { method: "POST", body: { email: OWNER.email } })).status).toBe(200);
  const [link] = await nextLinks(smtp, OWNER.email, before);
  return new URLSearchParams(new URL(link).hash.slice(1)).get("link") ?? "";
}

/** A fresh browser profile with its own virtual authenticator, recording CSP violations of every page it opens. */
async function device(): Promise<Device> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  page.on("response", (response) => void checkPageAnswer(response));
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e: any) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return { page, ...(await virtualAuthenticator(page)), violations: () => page.evaluate(() => window.__csp as string[]) };
}

const overview = () => `/dashboard/orgs/${orgId}`;

/** The control labelled `label` in the SPA's main, as a selector. */
async function field(page: Page, label: string): Promise<string> {
  const id = await page.evaluate(
    (t: string) => [...document.querySelectorAll("main label")].find((l: any) => l.textContent.trim() === t)?.getAttribute("for") ?? null,
    label,
  );
  if (!id) throw new Error(`no field labelled "${label}"`);
  return `[id="${id}"]`;
}

const button = (page: Page, label: string) =>
  page
    .locator(`main button::-p-text(${JSON.stringify(label)})`)
    .setTimeout(WAIT.timeout)
    .click();
const bodyHas = (page: Page, wanted: string) => page.waitForFunction((w: string) => document.body.innerText.includes(w), WAIT, wanted);

const text = (page: Page, id: string) => page.evaluate((i: string) => document.getElementById(i)?.textContent ?? "", id);

async function activityOf(codes: string[]): Promise<{ grp: string; who: string; action_code: string }[]> {
  const { rows } = await gw.ctx.db.query(
    "SELECT grp, who, action_code, detail FROM activity WHERE org_id = $1 AND action_code = ANY($2) ORDER BY id",
    [orgId, codes],
  );
  return rows;
}

describe("passkeys in chromium", () => {
  let owner: Device;

  it("the invited owner opens the e-mailed link, creates a passkey and is signed in", async () => {
    const before = smtp.mails.length;
    const added = await gw.admin("POST", `/orgs/${orgId}/members`, { ...OWNER, role: "owner" });
    expect(added.status).toBe(201);
    expect(added.body.invitation.sent).toBe(true);
    const [link] = await nextLinks(smtp, OWNER.email, before);
    expect(link).toMatch(new RegExp(`^${site}/dashboard/invitation#token=`));

    owner = await device();
    const response = await owner.page.goto(link, { waitUntil: "load" });
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await pageState(owner.page, "invited");
    expect(await text(owner.page, "invite-text")).toContain(`Passkey Org (organization ${orgId}) as owner`);
    await owner.page.type("#passkey-name", "Laptop");
    await owner.page.click("#create-passkey");
    // The verify answer opened the session: the page goes on to the dashboard, which resumes it.
    await dashboardAt(owner.page, overview());
    await owner.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(owner.page, "signed-in");
    expect(await text(owner.page, "who")).toBe(`${OWNER.name} (${OWNER.email}), owner of Passkey Org (organization ${orgId})`);
    expect(await text(owner.page, "passkeys")).toContain("Laptop");

    const { credentials } = await owner.cdp.send("WebAuthn.getCredentials", { authenticatorId: owner.authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: "localhost" });
    // The cookie is HttpOnly: the page's script cannot read it.
    expect(await owner.page.evaluate(() => document.cookie)).toBe("");
    const cookies = await owner.page.browserContext().cookies();
    expect(cookies.find((c) => c.name === "gw_session")).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", secure: false });
    expect(await owner.violations()).toEqual([]);
  });

  it("signs out, then signs in again with the passkey, lands on the dashboard and acts there; the counter moves and the activity names the member", async () => {
    const {
      rows: [before],
    } = await gw.ctx.db.query("SELECT counter FROM member_passkeys WHERE name = 'Laptop'");
    await owner.page.click("#signout");
    await pageState(owner.page, "signed-out");
    expect(await owner.page.browserContext().cookies()).toEqual([]);

    await owner.page.click("#passkey-signin");
    await dashboardAt(owner.page, overview());
    // The dashboard acts with the session: a change carries its CSRF token.
    await owner.page.goto(`${site}${overview()}/domains`, { waitUntil: "load" });
    await dashboardAt(owner.page, `${overview()}/domains`);
    await owner.page.type(await field(owner.page, "Domain"), "owner.example.org");
    await button(owner.page, "Add the domain");
    await bodyHas(owner.page, "owner.example.org added");
    const {
      rows: [domain],
    } = await gw.ctx.db.query("SELECT org_id FROM domains WHERE name = 'owner.example.org'");
    expect(Number(domain.org_id)).toBe(orgId);
    const {
      rows: [after],
    } = await gw.ctx.db.query("SELECT counter, last_used_at FROM member_passkeys WHERE name = 'Laptop'");
    expect(after.counter).toBeGreaterThan(before.counter);
    expect(after.last_used_at).not.toBeNull();

    const entries = await activityOf(["member.signed_in", "passkey.added", "member.signed_out"]);
    expect(entries.map((e) => e.action_code)).toEqual(["passkey.added", "member.signed_in", "member.signed_out", "member.signed_in"]);
    for (const entry of entries) expect(entry).toMatchObject({ grp: "team_security", who: `${OWNER.name} <${OWNER.email}>` });
    expect(await owner.violations()).toEqual([]);
  });

  it("on a new device without the passkey, an e-mailed link signs in and the member adds a passkey there", async () => {
    const laptop = await device();
    await laptop.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(laptop.page, "signed-out");
    const before = smtp.mails.length;
    await laptop.page.type("#email", OWNER.email);
    await laptop.page.click("#link-form button[type=submit]");
    await laptop.page.waitForFunction(() => document.getElementById("status")?.textContent.includes("on its way"), WAIT);
    const [link] = await nextLinks(smtp, OWNER.email, before);
    expect(link).toMatch(new RegExp(`^${site}/dashboard/signin#link=`));

    await laptop.page.goto(link, { waitUntil: "load" });
    // The page names the link's account and spends it only when asked.
    await pageState(laptop.page, "link");
    expect(await text(laptop.page, "link-account-text")).toBe(
      `${OWNER.name} (${OWNER.email}), owner of Passkey Org (organization ${orgId})`,
    );
    await laptop.page.click("#link-signin");
    // Spent, the token left the address bar: the member is on the dashboard.
    await dashboardAt(laptop.page, overview());
    expect(laptop.page.url()).toBe(`${site}${overview()}`);
    await laptop.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(laptop.page, "signed-in");
    await laptop.page.click("#add-passkey");
    await laptop.page.waitForFunction(() => document.getElementById("status")?.textContent === "Passkey added.", WAIT);
    const { credentials } = await laptop.cdp.send("WebAuthn.getCredentials", { authenticatorId: laptop.authenticatorId });
    expect(credentials).toHaveLength(1);
    await waitFor(async () => (await laptop.page.$$("#passkeys li")).length === 2);

    // The same link, opened again, is refused.
    const replay = await device();
    await replay.page.goto(link, { waitUntil: "load" });
    await pageState(replay.page, "signed-out");
    expect(await text(replay.page, "status")).toContain("already used");

    // Both devices are in the owner's list of sessions; the laptop revokes the first device's.
    // The laptop is in India (UTC+05:30): its times are written on its own clock, the exact UTC in their titles.
    await laptop.page.emulateTimezone("Asia/Kolkata");
    await laptop.page.reload({ waitUntil: "load" });
    await pageState(laptop.page, "signed-in");
    expect(await laptop.page.$$("#sessions li")).toHaveLength(2);
    const timesOf = (list: string) =>
      laptop.page.$$eval(`${list} li time`, (all) =>
        all.map((t) => ({ at: t.getAttribute("datetime") ?? "", text: t.textContent ?? "", title: t.getAttribute("title") ?? "" })),
      );
    // Each session: signed in and last seen; each passkey: added (and last used, once it signed in).
    const sessionTimes = await timesOf("#sessions");
    const passkeyTimes = await timesOf("#passkeys");
    expect(sessionTimes).toHaveLength(4);
    expect(passkeyTimes.length).toBeGreaterThanOrEqual(2);
    for (const time of [...sessionTimes, ...passkeyTimes]) {
      expect(time.text).toBe(localTime(time.at, "Asia/Kolkata"));
      expect(time.text).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} GMT\+5:30$/);
      expect(time.title).toBe(utcTime(time.at));
    }
    await laptop.page.click("#sessions li button");
    await waitFor(async () => (await laptop.page.$$("#sessions li")).length === 1);
    await owner.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(owner.page, "signed-out");
    expect(await text(owner.page, "status")).toBe("Your session has ended. Sign in again.");
    expect(await laptop.violations()).toEqual([]);
    await replay.page.browserContext().close();
    await laptop.page.browserContext().close();
  });

  it("a page of another origin cannot make a signed-in browser change anything", async () => {
    await owner.page.click("#passkey-signin");
    await dashboardAt(owner.page, overview());
    const live = async () => (await gw.ctx.db.query("SELECT count(*)::int AS n FROM member_sessions WHERE revoked_at IS NULL")).rows[0].n;
    const before = await live();
    // Attackers' pages (answered by interception: no server behind them) post a form to
    // sign-out: a top-level navigation, JSON smuggled in a text/plain body.
    const attackPage = `<form id="f" method="POST" action="${site}/admin/v1/auth/signout" enctype="text/plain"><input name='{"a":"' value='"}'></form>`;
    await owner.page.setRequestInterception(true);
    const onRequest = (request: import("puppeteer-core").HTTPRequest) => {
      if (request.url().endsWith("/attack")) void request.respond({ status: 200, contentType: "text/html", body: attackPage });
      else void request.continue();
    };
    owner.page.on("request", onRequest);
    const attack = async (origin: string) => {
      await owner.page.goto(`${origin}/attack`, { waitUntil: "load" });
      const answer = owner.page.waitForResponse((r) => r.url() === `${site}/admin/v1/auth/signout`);
      await owner.page.evaluate(() => document.getElementById("f").submit());
      const response = await answer;
      return { status: response.status(), body: await response.json() };
    };
    // Another site (evil.localhost): SameSite=Lax keeps the cookie out of a cross-site POST.
    expect(await attack(`http://evil.localhost:${new URL(site).port}`)).toMatchObject({ status: 401, body: { reason: "unauthorized" } });
    // Another origin of the same site (another port of localhost) gets the cookie sent, and
    // is refused by the Origin and CSRF token check.
    expect(await attack(`http://localhost:${Number(new URL(site).port) + 1}`)).toMatchObject({
      status: 403,
      body: { reason: "csrf_rejected" },
    });
    owner.page.off("request", onRequest);
    await owner.page.setRequestInterception(false);
    expect(await live()).toBe(before);
    await owner.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(owner.page, "signed-in");
  });

  it("a member (role member) signs in with a passkey, sees no admin action, and is refused forbidden when forcing one", async () => {
    const made = await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "Shop front", kind: "server" });
    expect(made.status).toBe(201);
    const keyId: number = made.body.details.id;
    const before = smtp.mails.length;
    const added = await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Milo Member", email: "milo@example.com", role: "member" });
    expect(added.status).toBe(201);
    const [link] = await nextLinks(smtp, "milo@example.com", before);
    const member = await device();
    await member.page.goto(link, { waitUntil: "load" });
    await pageState(member.page, "invited");
    expect(await text(member.page, "invite-text")).toContain(`Passkey Org (organization ${orgId}) as member`);
    await member.page.click("#create-passkey");
    await dashboardAt(member.page, overview());
    // Signed out, then in again with the passkey alone.
    await member.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(member.page, "signed-in");
    await member.page.click("#signout");
    await pageState(member.page, "signed-out");
    await member.page.click("#passkey-signin");
    await dashboardAt(member.page, overview());

    const buttons = (page: Page) =>
      page.evaluate(() => [...document.querySelectorAll("main button")].map((b: any) => b.textContent.trim()));
    await member.page.goto(`${site}${overview()}/keys/${keyId}`, { waitUntil: "load" });
    await dashboardAt(member.page, `${overview()}/keys/${keyId}`);
    await bodyHas(member.page, "Shop front");
    const onKey = await buttons(member.page);
    for (const action of ["Suspend", "Resume", "Rotate", "Revoke", "Save the settings"]) expect(onKey, action).not.toContain(action);
    await member.page.goto(`${site}${overview()}/domains`, { waitUntil: "load" });
    await dashboardAt(member.page, `${overview()}/domains`);
    expect(await buttons(member.page)).not.toContain("Add the domain");

    // Forced from the page with the session's own CSRF token: refused by role, with the reason's message.
    const forced = await member.page.evaluate(
      async (id: number, org: number) => {
        const session = await (await window.fetch("/admin/v1/auth/session", { credentials: "same-origin" })).json();
        const headers = { "content-type": "application/json", accept: "application/json", "x-csrf-token": session.csrf_token };
        const post = async (path: string, body: unknown) => {
          const answer = await window.fetch(path, { method: "POST", credentials: "same-origin", headers, body: JSON.stringify(body) });
          return { status: answer.status, body: await answer.json() };
        };
        return [
          await post(`/admin/v1/keys/${id}/revoke`, {}),
          await post(`/admin/v1/orgs/${org}/domains`, { domain: "member.example.org" }),
        ];
      },
      keyId,
      orgId,
    );
    for (const answer of forced) {
      expect(answer).toMatchObject({ status: 403, body: { ok: false, reason: "forbidden", message: REASONS.forbidden.message } });
    }
    expect((await gw.admin("GET", `/keys/${keyId}`)).body.details.status).toBe("active");
    expect(await member.violations()).toEqual([]);
    await member.page.browserContext().close();
  });

  it("a sign-in link another page sends its visitor to signs in to nobody until the visitor, shown whose it is, asks", async () => {
    // Milo (the member above) asks for a link to his own account, and sends it to Olga's
    // browser (signed in as Olga): a login CSRF, were the link spent on opening.
    const before = smtp.mails.length;
    const asked = await gw.call("/admin/v1/auth/signin/link", { method: "POST", body: { email: "milo@example.com" } });
    expect(asked.status).toBe(200);
    const [link] = await nextLinks(smtp, "milo@example.com", before);
    const spent = async () =>
      (await gw.ctx.db.query("SELECT count(*)::int AS n FROM member_links WHERE purpose = 'signin' AND used_at IS NOT NULL")).rows[0].n;
    const spentBefore = await spent();
    const sessionOf = (page: Page) =>
      page.evaluate(
        async () => (await (await window.fetch("/admin/v1/auth/session", { credentials: "same-origin" })).json()).member?.email,
      );
    await owner.page.goto(`${site}/dashboard/signin`, { waitUntil: "load" });
    await pageState(owner.page, "signed-in");
    await owner.page.goto(link, { waitUntil: "load" });
    await pageState(owner.page, "link");
    expect(await text(owner.page, "link-account-text")).toBe(
      `Milo Member (milo@example.com), member of Passkey Org (organization ${orgId})`,
    );
    expect(await sessionOf(owner.page)).toBe(OWNER.email);
    // Not hers: the page goes back to her own session, the link unspent and gone from the address bar.
    await owner.page.click("#link-not-mine");
    await pageState(owner.page, "signed-in");
    expect(await text(owner.page, "who")).toContain(OWNER.email);
    expect(new URL(owner.page.url()).hash).toBe("");
    expect(await sessionOf(owner.page)).toBe(OWNER.email);
    expect(await spent()).toBe(spentBefore);
    // The link still works for the one it was made for, once he asks.
    const milo = await device();
    await milo.page.goto(link, { waitUntil: "load" });
    await pageState(milo.page, "link");
    expect(await spent()).toBe(spentBefore);
    await milo.page.click("#link-signin");
    await dashboardAt(milo.page, overview());
    expect(await sessionOf(milo.page)).toBe("milo@example.com");
    expect(await spent()).toBe(spentBefore + 1);
    expect(await milo.violations()).toEqual([]);
    await milo.page.browserContext().close();
  });

  it("the link's card names the organization with its id, and a name's reordering characters show as code points", async () => {
    // Whoever names an organization chooses its characters: a right-to-left override could make
    // the card read as another organization's ("… (organization 21)" written backwards).
    const hostile = "Passkey Org\u202e)12 noitazinagro(\u202c\u2066";
    expect((await gw.admin("PATCH", `/orgs/${orgId}`, { name: hostile })).status).toBe(200);
    try {
      const before = smtp.mails.length;
      expect((await gw.call("/admin/v1/auth/signin/link", { method: "POST", body: { email: "milo@example.com" } })).status).toBe(200);
      const [link] = await nextLinks(smtp, "milo@example.com", before);
      const visitor = await device();
      await visitor.page.goto(link, { waitUntil: "load" });
      await pageState(visitor.page, "link");
      expect(await text(visitor.page, "link-account-text")).toBe(
        `Milo Member (milo@example.com), member of Passkey Org⟨U+202E⟩)12 noitazinagro(⟨U+202C⟩⟨U+2066⟩ (organization ${orgId})`,
      );
      await visitor.page.click("#link-not-mine");
      expect(await visitor.violations()).toEqual([]);
      await visitor.page.browserContext().close();
    } finally {
      await gw.admin("PATCH", `/orgs/${orgId}`, { name: "Passkey Org" });
    }
  });

  it("the pages, signed out and signed in, at 1280 and 390 px: no accessibility violation axe-core can find, nothing wider than the window", async () => {
    const require = createRequire(import.meta.url);
    const axePath = require.resolve("axe-core/axe.min.js");
    const shots = mkdtempSync(join(tmpdir(), "signin-shots-"));
    // The owner's browser is signed in (her passkeys and her sessions, user agents and all); a fresh one is not.
    const signedOut = await browser.createBrowserContext();
    const pages = [
      { name: "signin-out", page: await signedOut.newPage(), path: "/dashboard/signin", state: "signed-out" },
      {
        name: "invitation-invalid",
        page: await signedOut.newPage(),
        path: `/dashboard/invitation#token=${"A".repeat(43)}`,
        state: "invalid",
      },
      { name: "signin-in", page: owner.page, path: "/dashboard/signin", state: "signed-in" },
      { name: "signin-link", page: await signedOut.newPage(), path: `/dashboard/signin#link=${await liveLinkToken()}`, state: "link" },
    ];
    // axe-core is added as an inline script, which the pages' policy refuses: bypassed for this check only.
    for (const { page } of pages) await page.setBypassCSP(true);
    for (const width of [1280, 390]) {
      for (const { name, page, path, state } of pages) {
        // The tab in front: a tab behind another of its profile gets its timers throttled (axe waits on them).
        await page.bringToFront();
        await page.setViewport({ width, height: 900 });
        await page.goto(`${site}${path}`, { waitUntil: "load" });
        await pageState(page, state);
        await page.addScriptTag({ path: axePath });
        const found = await page.evaluate(async () => (await window.axe.run(document)).violations.map((v: any) => v.id));
        expect(found, `${name} at ${width} px`).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${name} at ${width} px: wider than the window`).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
      }
    }
    await owner.page.setBypassCSP(false);
    await signedOut.close();
    process.stdout.write(`\nsign-in pages' screenshots: ${shots}\n`);
  });

  it("every answer the pages received from /admin/v1/ (sign-in routes included) matches the admin OpenAPI document", async () => {
    await waitFor(() => answers.signin > 0);
    expect(answers.mismatches).toEqual([]);
  });
});
