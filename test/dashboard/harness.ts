import { mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { sourcePath } from "../../shared/platform/paths.js";
import { ADMIN_TOKEN, type TestGateway } from "../helpers/gateway.js";
import { LOCALHOST_RESOLVER, siteOf } from "../helpers/passkey-browser.js";
import { WAIT } from "../helpers/browser-wait.js";

/**
 * The dashboard in a real browser (Debian's chromium, headless, puppeteer-core) against a
 * real test gateway. Every tab records what went wrong in it: page errors, console errors
 * (CSP refusals among them), and violations seen by a `securitypolicyviolation` listener
 * installed before any page script.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, window: any, performance: any, location: any;

export const WIDTHS = { narrow: 390, wide: 1280 } as const;
export type Width = keyof typeof WIDTHS;
export { WAIT };

const AXE = readFileSync(sourcePath("node_modules", "axe-core", "axe.min.js"), "utf8");

export interface Tab {
  page: Page;
  /** Where the dashboard is for this tab: the gateway's address, or its site (a member's sign-in needs a host name). */
  origin: string;
  /** Page errors, console errors and CSP violations, in order. */
  problems: string[];
}

export interface Harness {
  browser: Browser;
  shots: string;
  /**
   * `site: true`: the tab goes to the gateway's SITE_URL (http://localhost:PORT) instead of
   * its 127.0.0.1 address, as passkeys need.
   */
  open(width: Width, options?: { bypassCsp?: boolean; site?: boolean }): Promise<Tab>;
  close(): Promise<void>;
}

/**
 * Chromium logs every refused fetch ("Failed to load resource: ... 404") as a console error:
 * those are the API's refusals, which the page shows as such, not faults of the page.
 */
const REFUSED_FETCH = /^Failed to load resource: the server responded with a status of (4\d\d)/;

export async function startHarness(gw: TestGateway, label: string): Promise<Harness> {
  const browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", LOCALHOST_RESOLVER, "--lang=en-US", "--disable-gpu", "--font-render-hinting=none"],
  });
  const shots = join(tmpdir(), `dashboard-shots-${label}-${process.pid}`);
  mkdirSync(shots, { recursive: true });
  const open: Harness["open"] = async (width, options = {}) => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width: WIDTHS[width], height: width === "narrow" ? 844 : 900, deviceScaleFactor: 1 });
    if (options.bypassCsp) await page.setBypassCSP(true);
    // Every load is a cold one: the first-render figures are a first visit's.
    await page.setCacheEnabled(false);
    const tab: Tab = { page, origin: options.site ? siteOf(gw) : gw.url, problems: [] };
    page.on("pageerror", (error) => tab.problems.push(`pageerror: ${String(error)}`));
    page.on("console", (message) => {
      if (message.type() === "error" && !REFUSED_FETCH.test(message.text())) tab.problems.push(`console: ${message.text()}`);
    });
    await page.evaluateOnNewDocument(() => {
      window.__csp = [];
      document.addEventListener("securitypolicyviolation", (e: any) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return tab;
  };
  return { browser, shots, open, close: () => browser.close() };
}

/** Waits until the page has a heading and nothing is loading; the time since navigation start, in ms. */
export async function settled(page: Page): Promise<number> {
  await page.waitForFunction(
    () =>
      document.querySelector("main h1") !== null &&
      document.querySelector("[aria-busy='true']") === null &&
      document.querySelector(".boot") === null,
    WAIT,
  );
  return page.evaluate(() => Math.round(performance.now()));
}

/** Goes to a dashboard address (a full load, cold cache) and waits for it to settle; the first-render time in ms. */
export async function visit(tab: Tab, path: string): Promise<number> {
  await tab.page.goto(`${tab.origin}${path}`, { waitUntil: "domcontentloaded" });
  return settled(tab.page);
}

export async function signInWithAdminToken(tab: Tab): Promise<void> {
  await signInWithToken(tab, ADMIN_TOKEN, "/dashboard/operator");
}

/** A token typed into the dashboard's sign-in page, as a person pastes it; settled once the address starts with `home`. */
export async function signInWithToken(tab: Tab, token: string, home: string): Promise<void> {
  await tab.page.goto(`${tab.origin}/dashboard`, { waitUntil: "domcontentloaded" });
  await tab.page.waitForSelector("input[type=password]", WAIT);
  await tab.page.type("input[type=password]", token);
  await tab.page.click("form button[type=submit].primary");
  await tab.page.waitForFunction((start: string) => location.pathname.startsWith(start), WAIT, home);
  await settled(tab.page);
}

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** axe-core on the page as it is; the serious and critical violations. */
export async function axe(page: Page): Promise<AxeViolation[]> {
  // Evaluated through DevTools, which the page's CSP does not govern (no script tag is added).
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(" ")) }));
  });
}

export async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => window.__csp as string[]);
}

export async function shot(harness: Harness, page: Page, name: string): Promise<string> {
  const path = join(harness.shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
