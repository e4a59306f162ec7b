import type { HTTPRequest, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "../helpers/gateway.js";
import { PLAIN, openDashboardWorld, type DashboardWorld } from "./fixtures.js";
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
 * The operator corrects the status page (docs/dashboard.md, the operator's tabs): an
 * incident's title, impact and affected services, and a maintenance window's title, times,
 * services and details, through the forms the "Edit" buttons open, clicked and typed as a
 * person does, in a browser whose zone is Asia/Kolkata (UTC+05:30, so a time typed in the
 * browser's zone and a UTC one differ, by a half hour too). After each save the page shows
 * the new values, the admin API (GET) and the public status document and page carry them,
 * and the tab sent one PATCH with only what changed. Refusals (an empty title, an end before
 * the start, a window cancelled meanwhile: 409) are shown in the form and change nothing.
 * With a form open, at 1280 and 390 px and in the dark scheme: axe-core finds no serious or
 * critical violation, nothing is wider than the window, no page error, no CSP violation;
 * screenshots into the harness's directory (its path is printed).
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, window: any;

const ZONE = "Asia/Kolkata";
const ZONE_OFFSET_MS = 330 * 60_000;

let gw: TestGateway;
let harness: Harness;
let opened: DashboardWorld | undefined;

beforeAll(async () => {
  opened = await openDashboardWorld("opstatus");
  ({ gw, harness } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

/** A tab in Kolkata's zone, signed in with the admin token, recording the PATCH calls it sends to the admin API. */
async function operatorTab(
  width: Width,
  scheme: "light" | "dark" = "light",
): Promise<{ tab: Tab; patches: { path: string; body: any }[] }> {
  const tab = await harness.open(width);
  await tab.page.emulateTimezone(ZONE);
  await tab.page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
  const patches: { path: string; body: any }[] = [];
  tab.page.on("request", (request: HTTPRequest) => {
    if (request.method() === "PATCH" && request.url().includes("/admin/v1/status/"))
      patches.push({ path: new URL(request.url()).pathname, body: JSON.parse(request.postData() ?? "{}") });
  });
  await signInWithAdminToken(tab);
  return { tab, patches };
}

/** The page as it is: axe clean, no CSP violation, nothing wider than the window, a screenshot. */
async function check(tab: Tab, name: string, width: Width): Promise<void> {
  const where = `${name} at ${WIDTHS[width]}px`;
  const violations = await axe(tab.page);
  expect(violations, `${where}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(await cspViolations(tab.page), where).toEqual([]);
  const wide = await tab.page.evaluate(() => document.documentElement.scrollWidth);
  expect(wide, `${where}: the page's width`).toBeLessThanOrEqual(WIDTHS[width]);
  // Every control of an open editor inside the window (a table may scroll sideways in its own region).
  const outside = await tab.page.evaluate(() =>
    [...document.querySelectorAll(".edit-panel input, .edit-panel select, .edit-panel textarea, .edit-panel button")]
      .filter((e: any) => e.getBoundingClientRect().right > window.innerWidth || e.getBoundingClientRect().left < 0)
      .map((e: any) => e.outerHTML.slice(0, 80)),
  );
  expect(outside, `${where}: controls outside the window`).toEqual([]);
  await shot(harness, tab.page, `${name}-${WIDTHS[width]}`);
}

/** An instant as Kolkata's wall clock, the value of a datetime-local field there: `YYYY-MM-DDTHH:MM`. */
function kolkata(iso: string): string {
  return new Date(Date.parse(iso) + ZONE_OFFSET_MS).toISOString().slice(0, 16);
}

/** Kolkata's wall clock back to the instant, as the API should receive it. */
function fromKolkata(local: string): string {
  return new Date(Date.parse(`${local}:00Z`) - ZONE_OFFSET_MS).toISOString().replace(".000Z", "Z");
}

/**
 * A whole minute `days` days and `hours` hours after the gateway's clock (the test clock runs
 * days ahead of the browser's), as the API writes times: no milliseconds.
 */
function later(days: number, hours = 0): string {
  const ms = gw.ctx.clock.now() + days * 86_400_000 + hours * 3_600_000;
  return new Date(Math.floor(ms / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
}

/** A time as the browser sends it (`Date.prototype.toISOString`, milliseconds included). */
function sent(iso: string): string {
  return new Date(iso).toISOString();
}

/**
 * Types a wall-clock time into a datetime-local field as a person does with Chromium's
 * en-US field: month, day, year, then hour, minute and AM/PM.
 */
async function typeTime(page: Page, selector: string, local: string): Promise<void> {
  const [date, time] = local.split("T");
  const [year, month, day] = date.split("-");
  const [hour, minute] = time.split(":").map(Number);
  const h12 = hour % 12 === 0 ? 12 : hour % 12;
  await page.focus(selector);
  await page.keyboard.type(`${month}${day}${year}`);
  await page.keyboard.press("ArrowRight");
  await page.keyboard.type(`${String(h12).padStart(2, "0")}${String(minute).padStart(2, "0")}${hour >= 12 ? "P" : "A"}`);
  expect(await page.$eval(selector, (e: any) => e.value)).toBe(local);
}

/** Replaces a text field's value by typing, as a person selecting all of it and typing over it. */
async function retype(page: Page, selector: string, text: string): Promise<void> {
  await page.focus(selector);
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  if (text) await page.type(selector, text);
  expect(await page.$eval(selector, (e: any) => e.value)).toBe(text);
}

/** Ticks or unticks an "Affects" box of the form by its service. */
async function tick(page: Page, panel: string, service: string, on: boolean): Promise<void> {
  const box = `${panel} fieldset input[type=checkbox]`;
  const index = ["website", "api", "dashboard"].indexOf(service);
  const checked = await page.$$eval(box, (all: any[], i: number) => all[i].checked, index);
  if (checked !== on) await page.locator(`${panel} label.check::-p-text(${service})`).click();
  expect(await page.$$eval(box, (all: any[], i: number) => all[i].checked, index)).toBe(on);
}

/** The control a label of the panel names (by its `for`), as a selector: the field a person finds by its label. */
async function field(page: Page, panel: string, label: string): Promise<string> {
  const id = await page.$$eval(
    `${panel} label`,
    (labels: any[], text: string) => labels.find((l) => l.textContent.trim() === text)?.htmlFor ?? "",
    label,
  );
  expect(id, `${panel}: a field labelled "${label}"`).not.toBe("");
  expect(await page.$$eval(`[id='${id}']`, (all: any[]) => all.length)).toBe(1);
  return `[id='${id}']`;
}

async function isFocused(page: Page, selector: string): Promise<boolean> {
  return page.$eval(selector, (e: any) => e === document.activeElement);
}

async function activeLabel(page: Page): Promise<string> {
  return page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");
}

/** The text of the card (incident) or table row (window) the Edit button named `label` sits in. */
async function holderText(page: Page, label: string, holder: string): Promise<string> {
  return page.$eval(`button[aria-label='${label}']`, (b: any, h: string) => b.closest(h).innerText, holder);
}

/** A time as the public page writes it. */
function when(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

async function publicDocument(): Promise<any> {
  const res = await gw.call("/api/status.php");
  expect(res.status).toBe(200);
  return res.body;
}

async function publicPage(): Promise<string> {
  const res = await fetch(`${gw.url}/status`);
  expect(res.status).toBe(200);
  return res.text();
}

async function incidentOf(id: number): Promise<any> {
  const res = await gw.admin("GET", `/status/incidents/${id}`);
  expect(res.status).toBe(200);
  return res.body.incident;
}

async function windowOf(id: number): Promise<any> {
  const res = await gw.admin("GET", `/status/maintenance/${id}`);
  expect(res.status).toBe(200);
  return res.body.maintenance;
}

describe("the operator edits incidents", () => {
  it("title, impact and affected services through the form, at 1280 px: shown, in the API and on the public page", async () => {
    const { tab, patches } = await operatorTab("wide");
    const { page } = tab;
    const listed = await gw.admin("GET", "/status/incidents");
    const incident = listed.body.incidents.find((i: any) => i.title === PLAIN.incident);
    expect(incident).toMatchObject({ impact: "minor", affects: ["api"], status: "identified" });
    const id = incident.id as number;
    const edit = `button[aria-label='Edit incident #${id}']`;
    const panel = `#incident-${id}-edit`;

    await visit(tab, "/dashboard/operator?tab=incidents");
    expect(await page.$eval(edit, (b: any) => b.getAttribute("aria-expanded"))).toBe("false");
    await page.click(edit);
    await page.waitForSelector(`${panel} form`, WAIT);
    // Open: the address says so, the button too, and the title field has the focus, filled in.
    expect(new URL(page.url()).searchParams.get("edit")).toBe(String(id));
    expect(await page.$eval(edit, (b: any) => [b.getAttribute("aria-expanded"), b.getAttribute("aria-controls")])).toEqual([
      "true",
      `incident-${id}-edit`,
    ]);
    const titleField = await field(page, panel, "Title");
    const impactField = await field(page, panel, "Impact");
    expect(await isFocused(page, titleField)).toBe(true);
    expect(await page.$eval(titleField, (e: any) => e.value)).toBe(PLAIN.incident);
    expect(await page.$eval(impactField, (e: any) => e.value)).toBe("minor");
    expect(await page.$eval(`${panel} fieldset legend`, (e: any) => e.textContent)).toBe("Affects (none: everything)");
    await check(tab, "incident-edit", "wide");

    // Refused by the API (a title of spaces): said in the form, nothing changed.
    await retype(page, titleField, "   ");
    await page.locator(`${panel} button::-p-text(Save the incident)`).click();
    await page.waitForSelector(`${panel} .refusal .reason`, WAIT);
    expect(await page.$eval(`${panel} .refusal`, (e: any) => e.getAttribute("role"))).toBe("alert");
    expect(await page.$eval(`${panel} .refusal .reason`, (e: any) => e.textContent)).toMatch(/^(bad_|missing_|invalid_)/);
    expect(await incidentOf(id)).toMatchObject({ title: PLAIN.incident, impact: "minor", affects: ["api"] });
    expect(patches.map((p) => p.body)).toEqual([{ title: "" }]);

    // The correction: a new title, major impact, the website and the dashboard instead of the API.
    const title = "Verify answers slowly in eu-west and us-east";
    await retype(page, titleField, title);
    await page.select(impactField, "major");
    await tick(page, panel, "dashboard", true);
    await tick(page, panel, "api", false);
    await tick(page, panel, "website", true);
    await page.locator(`${panel} button::-p-text(Save the incident)`).click();
    await page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
    await page.waitForFunction(
      (b: string, t: string) => document.querySelector(b)?.closest("section.card")?.querySelector("h3")?.textContent === t,
      WAIT,
      edit,
      title,
    );
    // One PATCH, of what changed only, the services in the page's order.
    expect(patches.at(-1)).toEqual({
      path: `/admin/v1/status/incidents/${id}`,
      body: { title, impact: "major", affects: ["website", "dashboard"] },
    });
    expect(patches).toHaveLength(2);
    // The card: the new values, the done notice, the focus back on its Edit button, the panel closed in the address.
    const card = await holderText(page, `Edit incident #${id}`, "section.card");
    expect(await page.$eval(edit, (b: any) => b.closest("section.card").querySelector("h3").textContent)).toBe(title);
    expect(card).toContain("major impact");
    expect(card).toContain("affects website, dashboard");
    expect(card).toContain("Saved (title, impact, services)");
    expect(await activeLabel(page)).toBe(`Edit incident #${id}`);
    expect(await page.$eval(edit, (b: any) => b.getAttribute("aria-expanded"))).toBe("false");
    expect(new URL(page.url()).searchParams.get("edit")).toBeNull();
    // Kept: its updates are still there, and a reload shows the same.
    expect(card).toContain("A slow database replica; traffic moved away.");
    await visit(tab, "/dashboard/operator?tab=incidents");
    expect(await holderText(page, `Edit incident #${id}`, "section.card")).toContain("major impact");

    // The admin API and the public status document and page.
    expect(await incidentOf(id)).toMatchObject({ title, impact: "major", affects: ["website", "dashboard"], status: "identified" });
    const doc = await publicDocument();
    expect(doc.incidents.open.find((i: any) => i.id === id)).toMatchObject({ title, impact: "major", affects: ["website", "dashboard"] });
    // The public page: the incident's heading with its impact, its services by their names (fixtures.ts names the website's).
    const html = await publicPage();
    expect(html).toContain(`<h3>${title} <span`);
    expect(html).toContain("major · identified");
    expect(html).toContain("Affects: Website, Dashboard");
    expect(html).not.toContain(`<h3>${PLAIN.incident}`);

    // Saved with nothing changed: said, and nothing sent.
    await page.click(edit);
    await page.waitForSelector(`${panel} form`, WAIT);
    await page.locator(`${panel} button::-p-text(Save the incident)`).click();
    await page.waitForSelector(`${panel} .done`, WAIT);
    expect(await page.$eval(`${panel} .done`, (e: any) => e.textContent)).toBe("Nothing changed.");
    expect(patches).toHaveLength(2);
    // Close closes it and gives the focus back.
    await page.locator(`${panel} button::-p-text(Close)`).click();
    await page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
    expect(await activeLabel(page)).toBe(`Edit incident #${id}`);

    expect(tab.problems).toEqual([]);
    await page.browserContext().close();
  });

  it("a resolved incident may still be corrected; the form at 390 px and in the dark scheme", async () => {
    const made = await gw.admin("POST", "/status/incidents", {
      title: "Sign-in e-mails delayed",
      impact: "major",
      affects: ["dashboard"],
      status: "resolved",
      body: "Mail was queued for 20 minutes; all delivered.",
    });
    expect(made.status).toBe(201);
    const id = made.body.incident.id as number;
    const edit = `button[aria-label='Edit incident #${id}']`;
    const panel = `#incident-${id}-edit`;
    for (const scheme of ["light", "dark"] as const) {
      const { tab } = await operatorTab("narrow", scheme);
      await visit(tab, "/dashboard/operator?tab=incidents");
      await tab.page.click(edit);
      await tab.page.waitForSelector(`${panel} form`, WAIT);
      await check(tab, `${scheme === "dark" ? "dark-" : ""}incident-edit-resolved`, "narrow");
      expect(tab.problems).toEqual([]);
      if (scheme === "dark") await tab.page.browserContext().close();
      else {
        // Minor after all, and the API too.
        await tab.page.select(`${panel} select`, "minor");
        await tick(tab.page, panel, "api", true);
        await tab.page.locator(`${panel} button::-p-text(Save the incident)`).click();
        await tab.page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
        await tab.page.waitForFunction(
          (b: string) => document.querySelector(b)?.closest("section.card")?.innerText.includes("minor impact · affects api, dashboard"),
          WAIT,
          edit,
        );
        expect(await incidentOf(id)).toMatchObject({ impact: "minor", affects: ["api", "dashboard"], status: "resolved" });
        const doc = await publicDocument();
        expect(doc.incidents.recent.find((i: any) => i.id === id)).toMatchObject({ impact: "minor", affects: ["api", "dashboard"] });
        await shot(harness, tab.page, "incident-saved-390");
        expect(tab.problems).toEqual([]);
        await tab.page.browserContext().close();
      }
    }
  });
});

describe("the operator edits maintenance windows", () => {
  it("title and times through the form, in the browser's zone, at 1280 px: shown, in the API and on the public page", async () => {
    const { tab, patches } = await operatorTab("wide");
    const { page } = tab;
    const listed = await gw.admin("GET", "/status/maintenance");
    const before = listed.body.maintenance.find((m: any) => m.title === "Database upgrade");
    expect(before).toBeTruthy();
    const id = before.id as number;
    const edit = `button[aria-label='Edit "Database upgrade"']`;
    const panel = `#maintenance-${id}-edit`;

    await visit(tab, "/dashboard/operator?tab=maintenance");
    await page.click(edit);
    await page.waitForSelector(`${panel} form`, WAIT);
    expect(new URL(page.url()).searchParams.get("edit")).toBe(String(id));
    // Every field by its label, filled in: the times on Kolkata's clock, to the minute.
    const labels = ["Title", "Starts (your time)", "Ends (your time)", "Details"];
    const fields = [];
    for (const label of labels) fields.push(await field(page, panel, label));
    const [titleSel, startsSel, endsSel] = fields;
    const seen = [];
    for (const f of fields) seen.push(await page.$eval(f, (e: any) => [e.type, e.value]));
    expect(seen).toEqual([
      ["text", "Database upgrade"],
      ["datetime-local", kolkata(before.starts_at)],
      ["datetime-local", kolkata(before.ends_at)],
      ["textarea", "PostgreSQL 17."],
    ]);
    expect(await isFocused(page, titleSel)).toBe(true);
    await check(tab, "maintenance-edit", "wide");

    const title = "Database upgrade to PostgreSQL 17";
    const starts = later(3);
    const ends = later(3, 2);
    await retype(page, titleSel, title);
    await typeTime(page, startsSel, kolkata(starts));
    await typeTime(page, endsSel, kolkata(ends));
    expect(fromKolkata(kolkata(starts))).toBe(starts);
    await page.locator(`${panel} button::-p-text(Save the window)`).click();
    await page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
    await page.waitForSelector("main .outcome .done", WAIT);
    expect(patches).toEqual([
      { path: `/admin/v1/status/maintenance/${id}`, body: { title, starts_at: sent(starts), ends_at: sent(ends) } },
    ]);
    // The row: the new title and times (the <time> elements' machine-readable values), the focus back on Edit.
    const newEdit = `button[aria-label='Edit "${title}"']`;
    await page.waitForSelector(newEdit, WAIT);
    const row = await page.$eval(newEdit, (b: any) => ({
      text: b.closest("tr").innerText,
      times: [...b.closest("tr").querySelectorAll("time")].map((t: any) => t.getAttribute("datetime")),
    }));
    expect(row.text).toContain(title);
    expect(row.times).toEqual([starts, ends]);
    expect(await activeLabel(page)).toBe(`Edit "${title}"`);
    expect(await page.$eval("main .outcome .done", (e: any) => e.textContent)).toContain("Window saved (title, start, end)");

    // The admin API and the public status document and page.
    expect(await windowOf(id)).toMatchObject({ title, starts_at: starts, ends_at: ends, body: "PostgreSQL 17.", affects: ["api"] });
    const doc = await publicDocument();
    expect(doc.maintenance.upcoming.find((m: any) => m.id === id)).toMatchObject({ title, starts_at: starts, ends_at: ends });
    const html = await publicPage();
    expect(html).toContain(`<h3>${title}</h3>`);
    expect(html).toContain(`${when(starts)} to ${when(ends)}`);

    // An end before the start: the API refuses it, next to "Ends" and in the form; nothing changes.
    await page.click(newEdit);
    await page.waitForSelector(`${panel} form`, WAIT);
    // The list's notice of the last save is gone once an editor opens again.
    expect(await page.$$eval("main .outcome .done", (all: any[]) => all.length)).toBe(0);
    const startsAgain = await field(page, panel, "Starts (your time)");
    const endsAgain = await field(page, panel, "Ends (your time)");
    expect(await page.$eval(startsAgain, (e: any) => e.value)).toBe(kolkata(starts));
    // Read once: the wall clock may pass a minute between typing and the check below.
    const early = later(2, 23);
    await typeTime(page, endsAgain, kolkata(early));
    await page.locator(`${panel} button::-p-text(Save the window)`).click();
    await page.waitForSelector(`${panel} .refusal .reason`, WAIT);
    expect(await page.$eval(`${panel} .refusal .reason`, (e: any) => e.textContent)).toBe("bad_ends_at");
    expect(await page.$eval(`${panel} .refusal`, (e: any) => e.textContent)).toContain("ends_at must be after starts_at");
    expect(await page.$eval(endsAgain, (e: any) => e.getAttribute("aria-invalid"))).toBe("true");
    const described = await page.$eval(endsAgain, (e: any) => document.getElementById(e.getAttribute("aria-describedby"))?.textContent);
    expect(described).toBe("Must be after the start.");
    expect(patches.at(-1)?.body).toEqual({ ends_at: sent(early) });
    expect(await windowOf(id)).toMatchObject({ title, starts_at: starts, ends_at: ends });
    await check(tab, "maintenance-refused", "wide");
    await page.locator(`${panel} button::-p-text(Close)`).click();
    await page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
    expect(await activeLabel(page)).toBe(`Edit "${title}"`);

    expect(tab.problems).toEqual([]);
    await page.browserContext().close();
  });

  it("a window cancelled while its form is open: the 409 is shown, nothing changed; the form at 390 px and in the dark scheme", async () => {
    const made = await gw.admin("POST", "/status/maintenance", {
      title: "Redis failover drill",
      body: "",
      affects: ["api", "website"],
      starts_at: later(4),
      ends_at: later(4, 1),
    });
    expect(made.status).toBe(201);
    const id = made.body.maintenance.id as number;
    const edit = `button[aria-label='Edit "Redis failover drill"']`;
    const panel = `#maintenance-${id}-edit`;

    // The dark scheme first, the form open: axe (contrast included) and a screenshot.
    const dark = await operatorTab("narrow", "dark");
    await visit(dark.tab, `/dashboard/operator?tab=maintenance&edit=${id}`);
    await dark.tab.page.waitForSelector(`${panel} form`, WAIT);
    await check(dark.tab, "dark-maintenance-edit", "narrow");
    expect(dark.tab.problems).toEqual([]);
    await dark.tab.page.browserContext().close();

    const { tab, patches } = await operatorTab("narrow");
    const { page } = tab;
    await visit(tab, "/dashboard/operator?tab=maintenance");
    await page.click(edit);
    await page.waitForSelector(`${panel} form`, WAIT);
    await check(tab, "maintenance-edit", "narrow");
    // Cancelled behind the page's back.
    expect((await gw.admin("POST", `/status/maintenance/${id}/cancel`)).status).toBe(200);
    await tick(page, panel, "dashboard", true);
    await page.locator(`${panel} button::-p-text(Save the window)`).click();
    await page.waitForSelector(`${panel} .refusal .reason`, WAIT);
    expect(patches).toEqual([{ path: `/admin/v1/status/maintenance/${id}`, body: { affects: ["website", "api", "dashboard"] } }]);
    expect(await page.$eval(`${panel} .refusal .reason`, (e: any) => e.textContent)).toBe("conflict");
    expect(await page.$eval(`${panel} .refusal`, (e: any) => e.textContent)).toContain("the maintenance was cancelled");
    const after = await windowOf(id);
    expect(after.title).toBe("Redis failover drill");
    expect([...after.affects].sort()).toEqual(["api", "website"]);
    expect(after.cancelled_at).not.toBeNull();
    await check(tab, "maintenance-conflict", "narrow");
    // Closed: the list read again says it is cancelled, and offers no Edit.
    await page.locator(`${panel} button::-p-text(Close)`).click();
    await page.waitForFunction((p: string) => document.querySelector(p) === null, WAIT, panel);
    await page.waitForFunction((b: string) => document.querySelector(b) === null, WAIT, edit);
    await settled(page);
    const rowText = await page.evaluate(
      () => [...document.querySelectorAll("main tr")].find((r: any) => r.innerText.includes("Redis failover drill"))?.innerText,
    );
    expect(rowText).toContain("cancelled");
    expect((await publicDocument()).maintenance.upcoming.some((m: any) => m.id === id)).toBe(false);

    expect(tab.problems).toEqual([]);
    process.stdout.write(`\noperator-status screenshots: ${harness.shots}\n`);
    await page.browserContext().close();
  });
});
