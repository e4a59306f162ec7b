import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSigninScript } from "../../ops/embed/build.js";
import { buildDashboard } from "../../ops/embed/dashboard-build.js";
import { EMBED_DIR } from "../../shared/embed/asset.js";
import { DASHBOARD_DIR } from "../../shared/embed/dashboard-asset.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, virtualAuthenticator } from "../helpers/passkey-browser.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { makeWorld, scanAndAssign, startScans, type FakeScans, type Made } from "./fixtures.js";
import {
  WAIT,
  WIDTHS,
  axe,
  cspViolations,
  settled,
  shot,
  signInWithAdminToken,
  startHarness,
  visit,
  type Harness,
  type Tab,
  type Width,
} from "./harness.js";

/**
 * The operator signs in with the admin token and walks every page at 390 and 1280 pixels:
 * each settles without page errors, console errors or CSP violations, axe-core finds no
 * serious or critical violation, and a screenshot is taken. The first render of each
 * (navigation start to a settled page, cold cache: a new browser context per width) is
 * printed, not asserted.
 *
 * Then the organization's owner (Ada) and a read-only `member` (Grace), both invited by
 * fixtures.ts, open their invitations, register a passkey with Chromium's virtual
 * authenticator and walk the same pages with their session cookie (the gateway as it is, no
 * stand-ins), at both widths, with the same checks. Each page shows its data, refuses
 * nothing, and the admin API answers the tab no 403; the owner is offered each page's admin
 * actions, the member none of them (her buttons and fields are listed page by page), and the
 * operator's pages are not in her navigation and say they are not available to her role.
 */

// Functions passed to page.evaluate run in the browser; this name is theirs.
declare const location: { search: string; pathname: string }, document: { body: { innerText: string }; querySelector(s: string): unknown };

let gw: TestGateway;
let harness: Harness;
let world: Made;
let scans: FakeScans;
let smtp: SmtpSink;

beforeAll(async () => {
  await buildSigninScript(EMBED_DIR);
  await buildDashboard(DASHBOARD_DIR);
  smtp = await startSmtpSink();
  // SITE_URL http://localhost:PORT: the owner's and the member's passkeys need a host name.
  gw = await startTestGateway("dashboard-walk", { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  world = await makeWorld(gw);
  scans = await startScans(gw, "strict-transport-security: max-age=300");
  await scanAndAssign(gw, scans, world.serverKey, world.domain);
  harness = await startHarness(gw, "walk");
}, 120_000);

afterAll(async () => {
  await harness?.close();
  await scans?.stop();
  await gw?.stop();
  await smtp?.stop();
});

/** Connects the server key the way a person does: pasted into the panel of the scans page. */
async function connectServerKey(tab: Tab): Promise<void> {
  await visit(tab, `/dashboard/orgs/${world.orgId}/scans`);
  await tab.page.type("input[type=password]", world.serverKey);
  await tab.page.click("form button[type=submit].primary");
  await tab.page.waitForSelector(".key-held", WAIT);
  await settled(tab.page);
}

function pages(): { name: string; path: string }[] {
  const org = `/dashboard/orgs/${world.orgId}`;
  return [
    { name: "operator", path: "/dashboard/operator" },
    { name: "operator-status", path: "/dashboard/operator?tab=status" },
    { name: "operator-incidents", path: "/dashboard/operator?tab=incidents" },
    { name: "operator-maintenance", path: "/dashboard/operator?tab=maintenance" },
    { name: "overview", path: org },
    { name: "keys", path: `${org}/keys` },
    { name: "key-settings", path: `${org}/keys/${world.clientKeyId}` },
    { name: "key-installations", path: `${org}/keys/${world.clientKeyId}?tab=installations` },
    { name: "key-usage", path: `${org}/keys/${world.clientKeyId}?tab=usage` },
    { name: "key-usage-reasons", path: `${org}/keys/${world.clientKeyId}?tab=usage&by=reason` },
    { name: "key-integration", path: `${org}/keys/${world.clientKeyId}?tab=integrate` },
    { name: "domains", path: `${org}/domains` },
    { name: "scans", path: `${org}/scans` },
    { name: "scan", path: `${org}/scans/${world.domain}` },
    { name: "findings", path: `${org}/findings` },
    { name: "finding", path: `${org}/findings/${world.domain}/tls:hsts` },
    { name: "content", path: `${org}/content` },
    { name: "siem", path: `${org}/siem` },
    { name: "team", path: `${org}/team` },
    { name: "activity", path: `${org}/activity` },
  ];
}

const firstRenders: Record<string, Record<Width, number>> = {};

/** Pages also taken as they first appear on screen (not the whole page), the size docs/dashboard/ keeps. */
const FIRST_SCREEN = new Set(["signin", "overview", "key-usage", "key-installations", "scan", "finding", "operator-status", "siem"]);

async function check(tab: Tab, name: string, width: Width): Promise<void> {
  const violations = await axe(tab.page);
  expect(violations, `${name} at ${WIDTHS[width]}px: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(await cspViolations(tab.page), name).toEqual([]);
  await shot(harness, tab.page, `${name}-${WIDTHS[width]}`);
  if (FIRST_SCREEN.has(name)) await tab.page.screenshot({ path: join(harness.shots, `screen-${name}-${WIDTHS[width]}.png`) });
}

describe("the dashboard, walked by the operator", () => {
  for (const width of ["wide", "narrow"] as const) {
    it(`every page at ${WIDTHS[width]} px: settles, no errors, axe clean`, async () => {
      const tab = await harness.open(width);
      // Signed out, every dashboard address shows the sign-in page (and comes back after).
      const ms = await visit(tab, `/dashboard/orgs/${world.orgId}/keys`);
      (firstRenders.signin ??= { wide: 0, narrow: 0 })[width] = ms;
      await tab.page.waitForFunction(() => location.search.includes("next="), WAIT);
      expect(new URL(tab.page.url()).searchParams.get("next")).toBe(`/dashboard/orgs/${world.orgId}/keys`);
      await check(tab, "signin", width);
      await signInWithAdminToken(tab);
      await connectServerKey(tab);
      for (const { name, path } of pages()) {
        const ms = await visit(tab, path);
        (firstRenders[name] ??= { wide: 0, narrow: 0 })[width] = ms;
        await check(tab, name, width);
      }
      if (width === "narrow") {
        // The navigation behind "Menu": opened from the keyboard, it takes you to a page and closes.
        await tab.page.focus("details.menu summary");
        await tab.page.keyboard.press("Enter");
        await tab.page.waitForSelector("details.menu[open] a[href$='/keys']", WAIT);
        await check(tab, "menu", width);
        await tab.page.click("details.menu[open] a[href$='/keys']");
        await tab.page.waitForFunction(() => location.pathname.endsWith("/keys") && !document.querySelector("details.menu[open]"), WAIT);
      }
      expect(tab.problems).toEqual([]);
      await tab.page.browserContext().close();
    });
  }

  it("prints the first-render times and where the screenshots are", () => {
    const lines = Object.entries(firstRenders).map(
      ([name, t]) => `${name.padEnd(20)} ${String(t.wide).padStart(5)} ms ${String(t.narrow).padStart(5)} ms`,
    );
    process.stdout.write(
      `\nfirst render (navigation start to settled page), 1280 px / 390 px:\n${lines.join("\n")}\nscreenshots: ${harness.shots}\n`,
    );
  });
});

// ---- the same pages as the organization's owner and as a read-only member, each with a passkey session ----

/** Who fixtures.ts invites, and as what. */
const PEOPLE = {
  owner: { name: "Ada Lovelace", email: "ada@example.com" },
  member: { name: "Grace Hopper", email: "grace@example.com" },
} as const;
type Role = keyof typeof PEOPLE;

/** What each page shows of the organization's data, whoever reads it (fixtures.ts PLAIN). */
const DATA: Record<string, string[]> = {
  overview: ["Shop front", "shop-eu-2", "blog.example.net", "splunk_hec"],
  keys: ["Shop front", "Back office"],
  "key-settings": ["Shop front", "shop.example.com"],
  "key-installations": ["shop-eu-2", "shop-us-1"],
  "key-usage": ["checkout", "login"],
  "key-usage-reasons": ["domain_mismatch", "insufficient_scope"],
  "key-integration": ["shop.example.com"],
  domains: ["shop.example.com", "blog.example.net"],
  scans: ["shop.example.com"],
  scan: ["strict-transport-security: max-age=300"],
  findings: ["ada@example.com", "grace@example.com"],
  finding: ["Strict-Transport-Security", "ada@example.com"],
  content: ["Welcome back! Free shipping over 50 €.", "STRIPE_KEY"],
  siem: ["siem.example.com", "hooks.example.com"],
  team: ["Ada Lovelace", "Grace Hopper"],
  activity: ["shop.example.com"],
};

/** The admin actions of each page (buttons, by their text): the owner is offered every one, the member none. */
const KEY_ACTIONS = ["Suspend", "Rotate", "Revoke"];
const ADMIN_ACTIONS: Record<string, string[]> = {
  keys: ["Create the key"],
  "key-settings": [...KEY_ACTIONS, "Save the settings"],
  "key-installations": [...KEY_ACTIONS, "Approve", "Block"],
  "key-usage": KEY_ACTIONS,
  "key-usage-reasons": KEY_ACTIONS,
  "key-integration": KEY_ACTIONS,
  domains: ["Add the domain", "Verify now"],
  scan: ["Accept the risk"],
  content: ["Edit", "Delete", "Publish", "Replace", "Store the secret"],
  siem: ["Send a test event", "Remove", "Add the destination", "Add the webhook"],
  team: ["Send the invitation", "Create the token"],
};

/**
 * Every button a member is offered, page by page, and nothing else: copying; the server key
 * of the security pages (its calls go to scan.php and assignments.php, which take the key,
 * not a role: a fresh scan, an assignment, a re-check); a note on a finding (the one admin
 * change a `member` may make); a passkey of her own.
 */
const KEY_PANEL = ["Use another", "Forget it"];
const MEMBER_MAY: Record<string, string[]> = {
  "key-integration": ["Copy"],
  domains: ["Copy"],
  scans: KEY_PANEL,
  scan: [...KEY_PANEL, "Run a fresh scan"],
  findings: KEY_PANEL,
  finding: [...KEY_PANEL, "Save", "Re-check now", "Add the note"],
  activity: KEY_PANEL,
  team: ["Add a passkey"],
};
/** The fields a member may fill in, outside the filters: the finding's owner, status, due date and a note. */
const MEMBER_FIELDS: Record<string, string[]> = { finding: ["Owner", "Status", "Due", "Add a note"] };

interface Seen {
  /** Visible buttons in the page (not the header's), by their text. */
  buttons: string[];
  /** Visible fields that take input, outside the filter forms, by their label. */
  fields: string[];
  refusals: string[];
  text: string;
}

async function seen(tab: Tab): Promise<Seen> {
  return tab.page.evaluate(() => {
    const all = (s: string): any[] => [...(document as any).querySelectorAll(s)];
    return {
      buttons: all("main button")
        .filter((b) => b.checkVisibility())
        .map((b) => b.textContent.trim()),
      fields: all("main input, main select, main textarea")
        .filter((f) => f.checkVisibility() && !f.disabled && !f.readOnly && f.type !== "hidden" && !f.closest("form.filters"))
        .map((f) => (f.labels?.[0]?.textContent ?? f.getAttribute("aria-label") ?? f.name).trim()),
      refusals: all("main .refusal").map((r) => r.textContent.trim()),
      text: document.body.innerText,
    };
  });
}

/** One tab per person, signed in once (the invitation and a passkey) and kept for both widths. */
const tabs: Partial<Record<Role, Promise<Tab>>> = {};
/** The tab's admin API answers 403: a page asking for what its reader may not have. */
const forbidden: Record<Role, string[]> = { owner: [], member: [] };

function signedIn(role: Role): Promise<Tab> {
  tabs[role] ??= signIn(role);
  return tabs[role];
}

async function signIn(role: Role): Promise<Tab> {
  // The gateway as it is (no stand-ins: they would ask it without the session's cookie).
  const tab = await harness.open("wide", { site: true, standIns: false });
  await virtualAuthenticator(tab.page);
  tab.page.on("response", (response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith("/admin/v1/") && response.status() === 403)
      forbidden[role].push(`${response.request().method()} ${url.pathname}`);
  });
  const [link] = await nextLinks(smtp, PEOPLE[role].email, 0);
  await acceptInvitation(tab.page, link, world.orgId, `${PEOPLE[role].name}'s laptop`);
  expect(await tab.page.evaluate(() => document.body.innerText)).toContain(`${PEOPLE[role].name} (${role})`);
  // Someone gave her the server key; the security pages take it as any browser would.
  await connectServerKey(tab);
  return tab;
}

describe.each(["owner", "member"] as const)("the dashboard, walked by the organization's %s (passkey session)", (role) => {
  for (const width of ["wide", "narrow"] as const) {
    it(`every page at ${WIDTHS[width]} px: settles, no errors, axe clean; ${role === "owner" ? "every admin action offered" : "no admin action offered, the operator's page not available"}`, async () => {
      const tab = await signedIn(role);
      // The same tab and session at both widths; every visit is still a full load.
      await tab.page.setViewport({ width: WIDTHS[width], height: width === "narrow" ? 844 : 900, deviceScaleFactor: 1 });
      for (const { name, path } of pages()) {
        await visit(tab, path);
        await check(tab, `${role}-${name}`, width);
        const s = await seen(tab);
        const where = `${role} on ${name} at ${WIDTHS[width]} px`;
        expect(s.refusals, where).toEqual([]);
        if (name.startsWith("operator")) {
          // Not the operator's pages: a page that says so, nothing to press, a way back.
          expect(s.text, where).toContain("Not available to your role.");
          expect(s.buttons, where).toEqual([]);
          expect(await tab.page.$(`main a[href="/dashboard/orgs/${world.orgId}"]`), where).not.toBeNull();
          continue;
        }
        for (const data of DATA[name]) expect(s.text, `${where} shows ${data}`).toContain(data);
        if (role === "owner") {
          for (const action of ADMIN_ACTIONS[name] ?? []) expect(s.buttons, `${where} offers ${action}`).toContain(action);
        } else {
          expect([...new Set(s.buttons)].sort(), `${where}: buttons`).toEqual([...(MEMBER_MAY[name] ?? [])].sort());
          expect(s.fields, `${where}: fields`).toEqual(MEMBER_FIELDS[name] ?? []);
        }
      }
      // Nothing the navigation offers leads to the operator's pages.
      expect(await tab.page.$("a[href^='/dashboard/operator']")).toBeNull();
      expect(tab.problems).toEqual([]);
      expect(forbidden[role]).toEqual([]);
    });
  }
});
