import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, pageState, virtualAuthenticator } from "../helpers/passkey-browser.js";
import type { SmtpSink } from "../helpers/smtp-sink.js";
import { dashboardPages, openDashboardWorld, type DashboardWorld, type Made } from "./fixtures.js";
import {
  WAIT,
  WIDTHS,
  axe,
  cspViolations,
  settled,
  shot,
  signInWithAdminToken,
  visit,
  type Harness,
  type Tab,
  type Width,
} from "./harness.js";

/**
 * The dark colour scheme (docs/dashboard.md): the style sheet follows the browser's
 * `prefers-color-scheme`. With the scheme emulated dark, the operator walks the pages of
 * walk.test.ts at 1280 and 390 px, and the states a walk does not show (a refusal, a
 * confirmation dialog, a field's error, a done notice, a key shown once); then the members'
 * sign-in and invitation pages (signed out, invited, signed in). On each: no page or console
 * error, no CSP violation, axe-core finds no serious or critical violation (color-contrast
 * among its rules), and the page's background is dark and its text light; a screenshot
 * `dark-<page>-<width>.png` goes to the harness's directory. In the light scheme the sign-in
 * page, the overview and a key's usage have a light background and dark text; the dark
 * checks fail if the dark rules go.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, window: any, location: { search: string; pathname: string };

let harness: Harness;
let world: Made;
let smtp: SmtpSink;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("dark");
  ({ harness, world, smtp } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

type Scheme = "light" | "dark";

async function scheme(page: Page, value: Scheme): Promise<void> {
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value }]);
}

/**
 * The relative luminance (WCAG, 0 black to 1 white) of what the page is painted on (the
 * body's computed background, or the root's when the body's is transparent) and of the
 * body's text.
 */
async function luminances(page: Page): Promise<{ background: number; text: number }> {
  return page.evaluate(() => {
    const rgb = (css: string): number[] => (css.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = (css: string): number => {
      const [r, g, b] = rgb(css).map((c) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const opaque = (css: string): boolean => {
      const [, , , alpha = 1] = rgb(css);
      return alpha > 0;
    };
    const body = window.getComputedStyle(document.body);
    const ground = opaque(body.backgroundColor) ? body.backgroundColor : window.getComputedStyle(document.documentElement).backgroundColor;
    return { background: luminance(ground), text: luminance(body.color) };
  });
}

/** Below this the background is dark (the dark scheme's is 0.007), above LIGHT light (the light scheme's is 0.91). */
const DARK = 0.05;
const LIGHT = 0.6;

/** The page as it is in the dark scheme: axe clean, no CSP violation, dark ground and light text, a screenshot. */
async function checkDark(tab: Tab, name: string, width: Width): Promise<void> {
  const where = `${name} at ${WIDTHS[width]}px`;
  const violations = await axe(tab.page);
  expect(violations, `${where}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(await cspViolations(tab.page), where).toEqual([]);
  const seen = await luminances(tab.page);
  expect(seen.background, `${where}: background`).toBeLessThan(DARK);
  expect(seen.text, `${where}: text`).toBeGreaterThan(LIGHT);
  await shot(harness, tab.page, `dark-${name}-${WIDTHS[width]}`);
}

async function openDark(width: Width, options: { site?: boolean } = {}): Promise<Tab> {
  const tab = await harness.open(width, options);
  await scheme(tab.page, "dark");
  return tab;
}

describe("the dashboard in the dark scheme, walked by the operator", () => {
  for (const width of ["wide", "narrow"] as const) {
    it(`every page at ${WIDTHS[width]} px: no errors, axe clean, dark`, async () => {
      const tab = await openDark(width);
      await visit(tab, "/dashboard/token");
      await checkDark(tab, "signin", width);
      await signInWithAdminToken(tab);
      // The server key, pasted into the scans page's panel as a person does.
      await visit(tab, `/dashboard/orgs/${world.orgId}/scans`);
      await tab.page.type("input[type=password]", world.serverKey);
      await tab.page.click("form button[type=submit].primary");
      await tab.page.waitForSelector(".key-held", WAIT);
      await settled(tab.page);
      for (const { name, path } of dashboardPages(world)) {
        await visit(tab, path);
        await checkDark(tab, name, width);
      }
      if (width === "narrow") {
        await tab.page.focus("details.menu summary");
        await tab.page.keyboard.press("Enter");
        await tab.page.waitForSelector("details.menu[open] a[href$='/keys']", WAIT);
        await checkDark(tab, "menu", width);
      }
      expect(tab.problems).toEqual([]);
      await tab.page.browserContext().close();
    }, 120_000);
  }

  it("the states a walk does not show, at 1280 px: a refusal, a dialog, a field's error, a done notice, a key shown once", async () => {
    const tab = await openDark("wide");
    await signInWithAdminToken(tab);
    const org = `/dashboard/orgs/${world.orgId}`;
    // A key that is not there: the page's refusal box, with its reason code (and no heading to settle on).
    await tab.page.goto(`${tab.origin}${org}/keys/999999`, { waitUntil: "domcontentloaded" });
    await tab.page.waitForSelector("main .refusal .reason", WAIT);
    await checkDark(tab, "refusal", "wide");
    // The confirmation of a revoke: a modal dialog, its danger button.
    await visit(tab, `${org}/keys/${world.clientKeyId}`);
    await tab.page.locator("main button.danger::-p-text(Revoke)").click();
    await tab.page.waitForSelector("dialog[open] button.danger[type=submit]", WAIT);
    await checkDark(tab, "dialog", "wide");
    await tab.page.keyboard.press("Escape");
    await tab.page.waitForFunction(() => document.querySelector("dialog[open]") === null, WAIT);
    // A key's creation: the fields' errors first, then the key shown once and the done notice.
    await visit(tab, `${org}/keys`);
    await tab.page.click("#create-key button[type=submit].primary");
    await tab.page.waitForSelector("#create-key .error", WAIT);
    await checkDark(tab, "field-error", "wide");
    await tab.page.type("#create-key input", "Night shift");
    await tab.page.select("#create-key select", "server");
    await tab.page.click("#create-key button[type=submit].primary");
    await tab.page.waitForSelector("#create-key .shown-once", WAIT);
    await tab.page.waitForSelector("#create-key .done", WAIT);
    await checkDark(tab, "shown-once", "wide");
    expect(tab.problems).toEqual([]);
    await tab.page.browserContext().close();
  }, 120_000);

  it("the light scheme is still light: the sign-in page, the overview and a key's usage on a light ground with dark text", async () => {
    const tab = await harness.open("wide");
    await scheme(tab.page, "light");
    await visit(tab, "/dashboard/token");
    const signin = await luminances(tab.page);
    expect(signin.background).toBeGreaterThan(LIGHT);
    expect(signin.text).toBeLessThan(DARK);
    await signInWithAdminToken(tab);
    for (const path of [`/dashboard/orgs/${world.orgId}`, `/dashboard/orgs/${world.orgId}/keys/${world.clientKeyId}?tab=usage`]) {
      await visit(tab, path);
      const seen = await luminances(tab.page);
      expect(seen.background, path).toBeGreaterThan(LIGHT);
      expect(seen.text, path).toBeLessThan(DARK);
    }
    expect(tab.problems).toEqual([]);
    await tab.page.browserContext().close();
  });
});

describe("the members' sign-in pages in the dark scheme", () => {
  it("signed out, invited and signed in, at 1280 and 390 px: no errors, axe clean, dark", async () => {
    const tab = await openDark("wide", { site: true });
    const at = async (width: Width) =>
      tab.page.setViewport({ width: WIDTHS[width], height: width === "narrow" ? 844 : 900, deviceScaleFactor: 1 });
    for (const width of ["wide", "narrow"] as const) {
      await at(width);
      await tab.page.goto(`${tab.origin}/dashboard/signin`, { waitUntil: "load" });
      await pageState(tab.page, "signed-out");
      await checkDark(tab, "members-signin", width);
    }
    // Grace's invitation (fixtures.ts), e-mailed to the sink: the invited state, then her passkey.
    const [link] = await nextLinks(smtp, "grace@example.com", 0);
    for (const width of ["wide", "narrow"] as const) {
      await at(width);
      await tab.page.goto(link, { waitUntil: "load" });
      await pageState(tab.page, "invited");
      await checkDark(tab, "members-invitation", width);
    }
    await at("wide");
    await virtualAuthenticator(tab.page);
    await acceptInvitation(tab.page, link, world.orgId, "Grace's phone");
    for (const width of ["wide", "narrow"] as const) {
      await at(width);
      await tab.page.goto(`${tab.origin}/dashboard/signin`, { waitUntil: "load" });
      await pageState(tab.page, "signed-in");
      await tab.page.waitForFunction(
        () => location.pathname === "/dashboard/signin" && document.querySelector("#sessions li") !== null,
        WAIT,
      );
      await checkDark(tab, "members-signed-in", width);
    }
    expect(tab.problems).toEqual([]);
    process.stdout.write(`\ndark screenshots: ${harness.shots}\n`);
    await tab.page.browserContext().close();
  }, 120_000);
});
