import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDashboard } from "../../ops/embed/dashboard-build.js";
import { DASHBOARD_DIR } from "../../shared/embed/dashboard-asset.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
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
 */

// Functions passed to page.evaluate run in the browser; this name is theirs.
declare const location: { search: string; pathname: string }, document: { body: { innerText: string }; querySelector(s: string): unknown };

let gw: TestGateway;
let harness: Harness;
let world: Made;
let scans: FakeScans;

beforeAll(async () => {
  await buildDashboard(DASHBOARD_DIR);
  gw = await startTestGateway("dashboard-walk");
  world = await makeWorld(gw);
  scans = await startScans(gw, "strict-transport-security: max-age=300");
  await scanAndAssign(gw, scans, world.serverKey, world.domain);
  harness = await startHarness(gw, "walk");
}, 120_000);

afterAll(async () => {
  await harness?.close();
  await scans?.stop();
  await gw?.stop();
});

/** Connects the server key the way a person does: pasted into the panel of the scans page. */
async function connectServerKey(tab: Tab): Promise<void> {
  await visit(gw, tab, `/dashboard/orgs/${world.orgId}/scans`);
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
      const ms = await visit(gw, tab, `/dashboard/orgs/${world.orgId}/keys`);
      (firstRenders.signin ??= { wide: 0, narrow: 0 })[width] = ms;
      await tab.page.waitForFunction(() => location.search.includes("next="), WAIT);
      expect(new URL(tab.page.url()).searchParams.get("next")).toBe(`/dashboard/orgs/${world.orgId}/keys`);
      await check(tab, "signin", width);
      await signInWithAdminToken(gw, tab);
      await connectServerKey(tab);
      for (const { name, path } of pages()) {
        const ms = await visit(gw, tab, path);
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
