import type { Page } from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { outboundPolicy } from "../../shared/platform/net/address-policy.js";
import { startSiemPusher, type SiemPusher } from "../../actors/siem/index.js";
import { pushNetwork } from "../../actors/siem/transport/guard.js";
import { buildSigninScript } from "../../ops/embed/build.js";
import { buildDashboard } from "../../ops/embed/dashboard-build.js";
import { EMBED_DIR } from "../../shared/embed/asset.js";
import { DASHBOARD_DIR } from "../../shared/embed/dashboard-asset.js";
import { startFakeHttp, type FakeHttp } from "../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, virtualAuthenticator, type Authenticator } from "../helpers/passkey-browser.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { startDnsServer, type TestDnsServer } from "../ingress/admin/dns-server.js";
import { makeWorld, startScans, type FakeScans, type Made } from "./fixtures.js";
import { WAIT, settled, shot, startHarness, visit, type Harness, type Tab } from "./harness.js";

/**
 * An account owner's day, clicked through in the browser as the owner: the operator makes
 * the organization and invites its owner (Ada, role `owner`) through the admin API; Ada
 * opens the e-mailed invitation, registers a passkey with Chromium's virtual authenticator,
 * and lands on the dashboard with her session cookie. Everything after is hers: every
 * change goes out with the session's CSRF token and the browser's Origin, checked by the
 * real gateway, against a real DNS server, the scan job handler and the SIEM
 * pusher. Add and verify a domain; create a key and copy it; a call with a second
 * installation waits, and is approved; run a scan; give a finding an owner and a due date;
 * accept a risk and release it; find it all in the activity record, in her name; send a
 * SIEM test event; suspend, rotate and revoke a key; settings refused next to their field;
 * content and a write-only secret; the keyboard alone.
 *
 * The operator's token does only what is the operator's: making the organization and its
 * fixtures (fixtures.ts), inviting the owner, and moving the test clock. It also reads
 * back what the browser changed (a key's settings), as a check from outside the page.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, navigator: any, window: any, location: { search: string; hash: string };
declare function getComputedStyle(element: unknown): { outlineStyle: string };

let gw: TestGateway;
let harness: Harness;
let world: Made;
let scans: FakeScans;
let dns: TestDnsServer;
let collector: FakeHttp;
let pusher: SiemPusher;
let tab: Tab;
let smtp: SmtpSink;
let authenticator: Authenticator;
/** Every state change the tab sent to the admin API: its path and its credentials. */
const changes: { path: string; csrf: boolean; bearer: boolean }[] = [];

const OWNER = { name: "Ada Lovelace", email: "ada@example.com" };

beforeAll(async () => {
  await buildSigninScript(EMBED_DIR);
  await buildDashboard(DASHBOARD_DIR);
  dns = await startDnsServer();
  collector = await startFakeHttp();
  smtp = await startSmtpSink();
  // The collector listens on loopback: SIEM destinations reach only the private blocks listed.
  // SITE_URL http://localhost:PORT: a passkey's relying party is a host name, not 127.0.0.1.
  gw = await startTestGateway("dashboard-day", {
    DNS_RESOLVER: dns.resolver,
    SCAN_ALLOW_PRIVATE: "1",
    OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    SITE_URL: "http://localhost:0",
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
  });
  // The operator makes the organization and invites its owner, Ada (fixtures.ts).
  world = await makeWorld(gw);
  scans = await startScans(gw, "strict-transport-security: max-age=300");
  pusher = await startSiemPusher(gw.ctx, {
    lingerMs: 20,
    network: pushNetwork({
      outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
      resolver: null,
      caPem: null,
      timeoutMs: 5_000,
      hostname: "gateway.test",
    }),
  });
  harness = await startHarness(gw, "day");
  tab = await harness.open("wide", { site: true });
  await tab.page.browserContext().overridePermissions(tab.origin, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  authenticator = await virtualAuthenticator(tab.page);
  tab.page.on("request", (request) => {
    const url = new URL(request.url());
    if (request.method() === "GET" || !url.pathname.startsWith("/admin/v1/")) return;
    const headers = request.headers();
    changes.push({ path: url.pathname, csrf: Boolean(headers["x-csrf-token"]), bearer: "authorization" in headers });
  });
}, 120_000);

afterAll(async () => {
  await harness?.close();
  await pusher?.stop();
  await scans?.stop();
  await gw?.stop();
  await collector?.close();
  await dns?.close();
  await smtp?.stop();
});

// A failed step leaves a picture of the page behind (the path is in the output).
afterEach(async (context) => {
  if (context.task.result?.state !== "fail" || !tab) return;
  const path = await shot(harness, tab.page, `failed-${context.task.name.replace(/\W+/g, "-").slice(0, 60)}`);
  process.stdout.write(`screenshot of the failure: ${path}\n`);
});

const org = () => `/dashboard/orgs/${world.orgId}`;

/** The control labelled `label` (its <label for>), as a selector. */
async function field(page: Page, label: string, within = "main"): Promise<string> {
  const id = await page.evaluate(
    (text: string, scope: string) => {
      const found = [...document.querySelectorAll(`${scope} label`)].find((l: any) => l.textContent.trim() === text);
      return found ? found.getAttribute("for") : null;
    },
    label,
    within,
  );
  if (!id) throw new Error(`no field labelled "${label}"`);
  return `[id="${id}"]`;
}

async function fill(page: Page, label: string, value: string, within = "main"): Promise<void> {
  const selector = await field(page, label, within);
  await page.$eval(selector, (e: any) => {
    e.value = "";
  });
  await page.type(selector, value);
}

const button = (page: Page, text: string, scope = "") =>
  page
    .locator(`${scope} button::-p-text(${JSON.stringify(text)})`.trim())
    .setTimeout(WAIT.timeout)
    .click();
const text = (page: Page) => page.evaluate(() => document.body.innerText as string);
/** Waits for the text on the page; when it never comes, the error says what the page said instead. */
async function waitText(page: Page, wanted: string): Promise<void> {
  try {
    await page.waitForFunction((w: string) => document.body.innerText.includes(w), WAIT, wanted);
  } catch (error) {
    const shown = await text(page).catch(() => "(no page)");
    throw new Error(`"${wanted}" never showed; the page says:\n${shown.slice(0, 3000)}`, { cause: error });
  }
}

/**
 * Follows "Open the key's page" under a key just created. The list reloads with the new key's
 * row, which moves the panel below it: a click aimed before that lands where the link was. So
 * it is clicked once the row is in and nothing is loading.
 */
async function openNewKey(page: Page, name: string): Promise<void> {
  await page.waitForFunction(
    (n: string) => [...document.querySelectorAll("main table a")].some((a: any) => a.textContent === n),
    WAIT,
    name,
  );
  await settled(page);
  await page.locator('a::-p-text("Open the key\'s page")').click();
}

function verify(key: string, extra: Record<string, string> = {}) {
  return gw.call("/api/v1/verify.php", { method: "POST", body: { key, domain: world.domain, ...extra } });
}

describe("an account owner's day in the dashboard", () => {
  it("the invited owner registers a passkey on the invitation page and lands on the dashboard, signed in", async () => {
    const { page } = tab;
    const [link] = await nextLinks(smtp, OWNER.email, 0);
    expect(link).toMatch(new RegExp(`^${tab.origin}/dashboard/invitation#token=`));
    await acceptInvitation(page, link, world.orgId, "Ada's laptop");
    const { credentials } = await authenticator.cdp.send("WebAuthn.getCredentials", { authenticatorId: authenticator.authenticatorId });
    expect(credentials).toHaveLength(1);
    // A session (an HttpOnly cookie), no token: the dashboard acts as Ada, owner.
    const cookies = await page.browserContext().cookies();
    expect(cookies.find((c) => c.name === "gw_session")).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    const me = await page.evaluate(async () => (await window.fetch("/admin/v1/me", { credentials: "same-origin" })).json());
    expect(me.principal).toMatchObject({ kind: "member", role: "owner", org: { id: world.orgId }, member: OWNER });
    await waitText(page, `${OWNER.name} (owner)`);
  });

  it("adds a domain and verifies it through DNS, with the record to copy", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/domains`);
    await fill(page, "Domain", "Not a domain!");
    await button(page, "Add the domain");
    await waitText(page, "Not a domain name");
    await fill(page, "Domain", "news.example.org");
    await button(page, "Add the domain");
    await waitText(page, "news.example.org added");
    const card = '[id="domain-news.example.org"]';
    const value = await page.$eval(await field(page, "Record value", card), (e: any) => e.value);
    const name = await page.$eval(await field(page, "Record name", card), (e: any) => e.value);
    expect(name).toMatch(/^_[a-z-]+\.news\.example\.org$/);
    expect(value).toMatch(/^gateway-verification=[0-9a-f]{32}$/);
    await button(page, "Copy", card);
    await waitText(page, "Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(name);
    // Not published yet: what was found, and what to fix.
    await button(page, "Verify now", card);
    await waitText(page, "No TXT record was found there");
    dns.txt.set(name, ["v=spf1 -all"]);
    await button(page, "Verify now", card);
    await waitText(page, "v=spf1 -all");
    dns.txt.set(name, [value]);
    await button(page, "Verify now", card);
    await waitText(page, "Verified: the organization owns news.example.org");
  });

  it("creates a client key, shows it once, and approves a second installation", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/keys`);
    await fill(page, "Name", "Checkout");
    await fill(page, "Domain (required)", world.domain);
    await button(page, "Create the key");
    await waitText(page, "Copy it now: it is shown this once");
    const key = await page.$eval(".shown-once input", (e: any) => e.value);
    expect(key).toMatch(/^ak_live_/);
    expect((await verify(key)).body.authorized).toBe(true);
    const pending = await verify(key, { install: "site-2" });
    expect(pending.body.reason).toBe("installation_pending");
    await openNewKey(page, "Checkout");
    await settled(page);
    await page.locator("a::-p-text(Installations)").click();
    await waitText(page, "site-2");
    expect(await text(page)).toContain("pending");
    await page.locator('button[aria-label="Approve installation site-2"]').click();
    await waitText(page, "Installation approved.");
    expect((await verify(key, { install: "site-2" })).body.authorized).toBe(true);
  });

  it("says a setting's mistake next to its field, and saves what changed", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/keys/${world.clientKeyId}`);
    await fill(page, "Allowed addresses", "203.0.113.0/33");
    await fill(page, "Allowed countries", "FR, UK");
    await button(page, "Save the settings");
    await waitText(page, "the prefix length is 0 to 32");
    await waitText(page, "is not a current ISO 3166-1 country code");
    expect(await page.$eval(await field(page, "Allowed addresses"), (e: any) => e.getAttribute("aria-invalid"))).toBe("true");
    await fill(page, "Allowed addresses", "203.0.113.0/24");
    await fill(page, "Allowed countries", "FR");
    await fill(page, "Calls per minute", "120");
    await button(page, "Save the settings");
    await waitText(page, "Saved (ip_allow, countries_allow, rate_per_minute)");
    const saved = await gw.admin("GET", `/keys/${world.clientKeyId}`);
    expect(saved.body.details).toMatchObject({ ip_allow: ["203.0.113.0/24"], countries_allow: ["FR"], rate_per_minute: 120 });
  });

  it("suspends, resumes, rotates (the new key shown once) and revokes behind a confirmation", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/keys`);
    await fill(page, "Name", "Spare");
    await page.select(await field(page, "Kind", "#create-key"), "server");
    await button(page, "Create the key");
    await waitText(page, "Copy it now: it is shown this once");
    const spare = await page.$eval(".shown-once input", (e: any) => e.value);
    expect(spare).toMatch(/^sk_live_/);
    await openNewKey(page, "Spare");
    await settled(page);
    await button(page, "Suspend");
    await page.waitForSelector("dialog[open]", WAIT);
    await button(page, "Suspend the key");
    await waitText(page, "Key suspended");
    expect((await verify(spare)).body.reason).toBe("key_suspended");
    await button(page, "Resume");
    await waitText(page, "Key resumed");
    await button(page, "Rotate");
    await page.waitForSelector("dialog[open]", WAIT);
    await page.select(await field(page, "Grace period of the old key", "dialog[open]"), "3600");
    await button(page, "Rotate the key");
    await waitText(page, "Copy it now: it is shown this once");
    const fresh = await page.$eval(".shown-once input", (e: any) => e.value);
    expect(fresh).toMatch(/^sk_live_/);
    expect((await verify(fresh)).body.authorized).toBe(true);
    // The page reloads the key after the rotation: clicked once nothing is loading.
    await settled(page);
    await page.locator('a::-p-text("Open the new key\'s page")').click();
    await settled(page);
    await button(page, "Revoke");
    await page.waitForSelector("dialog[open]", WAIT);
    // Escape cancels; nothing happened.
    await page.keyboard.press("Escape");
    await page.waitForSelector("dialog[open]", { hidden: true, ...WAIT });
    expect((await verify(fresh)).body.authorized).toBe(true);
    await button(page, "Revoke");
    await button(page, "Revoke the key");
    await waitText(page, "Key revoked");
    expect((await verify(fresh)).body.reason).toBe("invalid_key");
  });

  it("uses a new server key for the security pages, runs a scan within the hourly budget", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/keys`);
    await fill(page, "Name", "Security reader");
    await page.select(await field(page, "Kind", "#create-key"), "server");
    await button(page, "Create the key");
    await button(page, "Use this key for this tab's security pages");
    await waitText(page, "This tab now uses this key");
    await visit(tab, `${org()}/scans/${world.domain}`);
    await waitText(page, "No scan has run for this domain yet");
    await button(page, "Run a fresh scan");
    await waitText(page, "Scan done");
    await waitText(page, "Fresh scans left this hour: 9 of 10");
    expect(await text(page)).toContain("strict-transport-security: max-age=300");
  });

  it("gives a finding an owner and a due date, notes it, and tells its story", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/findings/${world.domain}/tls:hsts`);
    await waitText(page, "Nobody owns this finding yet");
    // As a person does: Ada is chosen once the team's list has filled the menu.
    const owner = await field(page, "Owner");
    await page.waitForSelector(`${owner} option[value="ada@example.com"]`, WAIT);
    await page.select(owner, "ada@example.com");
    const due = new Date(gw.ctx.clock.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await page.$eval(
      await field(page, "Due"),
      (e: any, value: string) => {
        e.value = value;
        e.dispatchEvent(new Event("input", { bubbles: true }));
      },
      due,
    );
    await button(page, "Save");
    await waitText(page, "owned by Ada Lovelace");
    await fill(page, "Add a note", "The CDN sets the header next week.");
    await button(page, "Add the note");
    await waitText(page, "The CDN sets the header next week.");
    expect(await text(page)).toContain(`due ${due}`);
    await visit(tab, `${org()}/findings?owner=ada%40example.com`);
    await waitText(page, "Strict-Transport-Security");
  });

  it("accepts a risk with a note and an expiry, and releases it", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/scans/${world.domain}`);
    const spf = '[id="finding-email:spf"]';
    await button(page, "Accept the risk", spf);
    await page.waitForSelector("dialog[open]", WAIT);
    await fill(page, "Why (kept with the acceptance)", "Mail goes through the provider's own SPF.", "dialog[open]");
    await page.locator("dialog[open] button[type=submit]").click();
    await waitText(page, "Risk accepted until");
    // The acceptance ends with its day in UTC, as the service counts days.
    await waitText(page, "ends (UTC).");
    await page.waitForFunction((s: string) => document.querySelector(s)?.innerText.includes("risk accepted"), WAIT, spf);
    await button(page, "Release the acceptance", spf);
    await waitText(page, "Acceptance released");
  });

  it("finds all of it in the activity record, filtered and paged", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/activity`);
    for (const line of [
      "Domain news.example.org verified by DNS TXT record",
      'Installation site-2 of key "Checkout" approved',
      "Risk accepted for email:spf",
      "Risk acceptance released for email:spf",
    ]) {
      await waitText(page, line);
    }
    await page.select(await field(page, "Group"), "risks");
    await page.waitForFunction(
      () => location.search.includes("group=risks") && !document.body.innerText.includes("Installation site-2"),
      WAIT,
    );
    await visit(tab, `${org()}/activity?group=trust`);
    expect(await text(page)).toContain("Installation site-2");
    // In the owner's name: the record says who, from her session.
    const { rows } = await gw.ctx.db.query<{ action_code: string; who: string }>(
      `SELECT action_code, who FROM activity WHERE org_id = $1
         AND action_code IN ('domain.verified', 'installation.approved', 'risk.accepted', 'risk.released')
         AND id > (SELECT min(id) FROM activity WHERE org_id = $1 AND action_code = 'passkey.added') ORDER BY id`,
      [world.orgId],
    );
    expect(rows.map((r) => r.action_code)).toEqual(["domain.verified", "installation.approved", "risk.accepted", "risk.released"]);
    for (const row of rows) expect(row.who).toBe(`${OWNER.name} <${OWNER.email}>`);
  });

  it("sends a SIEM test event to a new destination", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/siem`);
    await page.select(await field(page, "Kind"), "http");
    await fill(page, "URL", `${collector.url}/ingest`);
    await button(page, "Add the destination");
    await waitText(page, "Destination added");
    await button(page, "Send a test event", '[id="siem-2"]');
    await waitText(page, "delivered.");
    await waitFor(() => collector.requests > 0);
  });

  it("publishes content and stores a secret it never shows again", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/content`);
    await fill(page, "Content key", "notice");
    await fill(page, "Value", "Closed on Monday.");
    await button(page, "Publish");
    await waitText(page, '"notice" published');
    await fill(page, "Name", "WEBHOOK_TOKEN");
    await fill(page, "Value", "s3cr3t-value-never-shown", "form:has(input[type=password])");
    await button(page, "Store the secret");
    await waitText(page, 'Secret "WEBHOOK_TOKEN" stored');
    const html = await page.content();
    expect(html).not.toContain("s3cr3t-value-never-shown");
    expect(await page.$eval("input[type=password]", (e: any) => e.value)).toBe("");
  });

  it("works from the keyboard: skip link first, a dialog keeps focus and gives it back", async () => {
    const { page } = tab;
    await visit(tab, `${org()}/keys/${world.clientKeyId}`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement.textContent)).toBe("Skip to the page");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => location.hash)).toBe("#main");
    // Tab to the Suspend button and open it with the keyboard.
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement.textContent === "Suspend")) break;
    }
    await page.keyboard.press("Enter");
    await page.waitForSelector("dialog[open]", WAIT);
    expect(await page.evaluate(() => document.activeElement.textContent)).toBe("Cancel");
    await page.keyboard.press("Escape");
    await page.waitForSelector("dialog[open]", { hidden: true, ...WAIT });
    expect(await page.evaluate(() => document.activeElement.textContent)).toBe("Suspend");
    const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    expect(ring).toBe("solid");
    expect(tab.problems).toEqual([]);
  });

  it("made every change with the session's CSRF token and no token of the operator's", async () => {
    // Before the session, the invitation's own ceremony: its token is the proof, there is no CSRF token yet.
    const signedIn = changes.filter((c) => !c.path.startsWith("/admin/v1/auth/invitation/"));
    const paths = signedIn.map((c) => c.path.replace(/\/\d+(?=\/|$)/g, "/:id"));
    for (const path of [
      "/admin/v1/orgs/:id/domains/news.example.org/verify",
      "/admin/v1/keys/:id/installations/site-2/approve",
      "/admin/v1/keys/:id/rotate",
      "/admin/v1/keys/:id/revoke",
      "/admin/v1/orgs/:id/risks",
      "/admin/v1/orgs/:id/siem/:id/test",
      "/admin/v1/orgs/:id/secrets/WEBHOOK_TOKEN",
    ]) {
      expect(paths).toContain(path);
    }
    expect(signedIn.filter((c) => !c.csrf || c.bearer)).toEqual([]);
    // The rule is live for this session: the same change without the token is refused.
    const bare = await tab.page.evaluate(async (org: number) => {
      const answer = await window.fetch(`/admin/v1/orgs/${org}/domains`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ domain: "no-token.example.org" }),
      });
      return { status: answer.status, body: await answer.json() };
    }, world.orgId);
    expect(bare).toMatchObject({ status: 403, body: { reason: "csrf_rejected" } });
  });
});
