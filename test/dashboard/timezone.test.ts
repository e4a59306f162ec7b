import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDateOnly, localDate, localTime, utcTime, utcToday, wallClock } from "../../dashboard/src/time.js";
import type { TestGateway } from "../helpers/gateway.js";
import { openDashboardWorld, type DashboardWorld, type Made } from "./fixtures.js";
import { WAIT, axe, cspViolations, shot, signInWithAdminToken, visit, type Harness, type Tab } from "./harness.js";

/**
 * Times in the browser's zone (docs/dashboard.md, "Times"). The operator opens the dashboard
 * with Chromium's time zone emulated, once in Asia/Kolkata (+05:30, no summer time) and once
 * in America/New_York; times the admin API gives (a member's created_at, an installation's
 * first_seen_at, an incident's created_at) are shown as that zone's wall clock with its short
 * name, their `<time>` keeps the API's ISO value, and its title the exact UTC time. The
 * usage chart's days are the service's UTC days whatever the zone, and say so; the scan's
 * score history (instants) is on the zone's clock, its axis on the zone's days. Each page
 * stays axe clean. The expected text is computed here from the offsets, not with the
 * dashboard's code: a dashboard that went back to UTC fails.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any;

let gw: TestGateway;
let harness: Harness;
let world: Made;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("timezone");
  ({ gw, harness, world } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

async function read(path: string): Promise<any> {
  const got = await gw.admin("GET", path);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  return got.body;
}

/** `YYYY-MM-DD HH:MM` of an instant shifted by `offsetMinutes`, by arithmetic alone. */
function shifted(ms: number, offsetMinutes: number): string {
  return new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 16).replace("T", " ");
}

/**
 * What an en-US browser in `zone` shows for an instant: the wall clock and the zone's short
 * name. Kolkata is +05:30 all year ("GMT+5:30" in en-US); New York's offset at that instant
 * is read from Node's time zone data, and named EST or EDT.
 */
function expected(zone: "Asia/Kolkata" | "America/New_York", iso: string): string {
  const ms = Date.parse(iso);
  if (zone === "Asia/Kolkata") return `${shifted(ms, 330)} GMT+5:30`;
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
    .formatToParts(ms)
    .find((p) => p.type === "timeZoneName")?.value;
  const hours = name === "GMT-04:00" ? -4 : name === "GMT-05:00" ? -5 : Number.NaN;
  expect(hours, `New York's offset at ${iso}: ${name}`).not.toBeNaN();
  return `${shifted(ms, hours * 60)} ${hours === -4 ? "EDT" : "EST"}`;
}

/** `2026-11-25 13:20:05 UTC` from the ISO value, by slicing it. */
function exactUtc(iso: string): string {
  return `${new Date(Date.parse(iso)).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The `<time>` elements whose dateTime is `iso`: their text and title. */
async function timesOf(page: Page, iso: string): Promise<{ text: string; title: string | null }[]> {
  await page.waitForSelector(`time[datetime="${iso}"]`, WAIT);
  return page.evaluate(
    (value: string) =>
      [...document.querySelectorAll("time")]
        .filter((t: any) => t.getAttribute("datetime") === value)
        .map((t: any) => ({ text: t.textContent, title: t.getAttribute("title") })),
    iso,
  );
}

async function clean(tab: Tab, name: string): Promise<void> {
  const violations = await axe(tab.page);
  expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(await cspViolations(tab.page), name).toEqual([]);
  await shot(harness, tab.page, name);
}

describe("the dashboard's times, in the browser's zone", () => {
  for (const zone of ["Asia/Kolkata", "America/New_York"] as const) {
    it(`in ${zone}: local wall clock and zone, the UTC time in the title, chart days in UTC`, async () => {
      const org = `/dashboard/orgs/${world.orgId}`;
      const label = zone.split("/")[1].toLowerCase();
      const tab = await harness.open("wide");
      await tab.page.emulateTimezone(zone);
      await signInWithAdminToken(tab);
      // The emulation took (Chromium names Kolkata by its old name, Asia/Calcutta): the offset on 1 January 2026.
      const offset = await tab.page.evaluate(() => new Date("2026-01-01T00:00:00Z").getTimezoneOffset());
      expect(offset).toBe(zone === "Asia/Kolkata" ? -330 : 300);

      const shows = async (iso: string, where: string) => {
        const times = await timesOf(tab.page, iso);
        expect(times.length, `${where}: a <time> for ${iso}`).toBeGreaterThan(0);
        for (const time of times) {
          expect(time.text, where).toBe(expected(zone, iso));
          expect(time.text, where).not.toMatch(/UTC$/);
          expect(time.title, where).toBe(exactUtc(iso));
        }
      };

      // A member's created_at, on the team page.
      const members = (await read(`/orgs/${world.orgId}/members`)).members as { name: string; created_at: string }[];
      const ada = members.find((m) => m.name === "Ada Lovelace");
      expect(ada?.created_at).toMatch(/Z$/);
      await visit(tab, `${org}/team`);
      await shows(ada!.created_at, "team: Ada's created_at");
      await clean(tab, `timezone-${label}-team`);

      // An installation's first_seen_at, on the key's installations tab.
      const installs = (await read(`/keys/${world.clientKeyId}/installations`)).installations as {
        install: string;
        first_seen_at: string;
      }[];
      const install = installs.find((i) => i.install === "shop-eu-2");
      expect(install?.first_seen_at).toMatch(/Z$/);
      await visit(tab, `${org}/keys/${world.clientKeyId}?tab=installations`);
      await shows(install!.first_seen_at, "installations: shop-eu-2 first seen");
      await clean(tab, `timezone-${label}-key-installations`);

      // An incident's created_at, on the operator's incidents tab.
      const incidents = (await read("/status/incidents")).incidents as { title: string; created_at: string }[];
      const incident = incidents.find((i) => i.title === "Elevated verify latency in eu-west");
      expect(incident?.created_at).toMatch(/Z$/);
      await visit(tab, "/dashboard/operator?tab=incidents");
      await shows(incident!.created_at, "incidents: created_at");
      await clean(tab, `timezone-${label}-operator-incidents`);

      // The usage chart: its days are the service's (UTC) days in every zone, and say so.
      const usage = await read(`/keys/${world.clientKeyId}/usage`);
      const days = (usage.usage as { day: string; calls: number }[]).filter((d) => d.calls > 0).map((d) => d.day);
      expect(days.length).toBeGreaterThan(0);
      await visit(tab, `${org}/keys/${world.clientKeyId}?tab=usage`);
      const chart = await tab.page.evaluate(() => ({
        head: document.querySelector("figure.chart table.numbers thead th")?.textContent,
        rows: [...document.querySelectorAll("figure.chart table.numbers tbody th")].map((th: any) => th.textContent),
        caption: document.querySelector("figure.chart figcaption")?.textContent ?? "",
        desc: document.querySelector("figure.chart svg desc")?.textContent ?? "",
      }));
      expect(chart.head).toBe("Day (UTC)");
      expect(chart.rows).toEqual(days);
      expect(chart.caption).toContain("Days in UTC");
      expect(chart.desc).toContain(`from ${usage.from} to ${usage.to} (days in UTC)`);
      await clean(tab, `timezone-${label}-key-usage`);

      // The score history: its points are instants (scan times), written on the zone's clock,
      // and its axis gives the local days of the first and last scan.
      const scanned = await gw.call("/api/v1/scan.php", { query: { key: world.serverKey, domain: world.domain, history: "1" } });
      expect(scanned.status, JSON.stringify(scanned.body)).toBe(200);
      const history = scanned.body.history as Record<string, { at: string }[]>;
      const points = Object.values(history).flat();
      expect(points.length).toBeGreaterThan(0);
      await visit(tab, `${org}/scans`);
      await tab.page.type("input[type=password]", world.serverKey);
      await tab.page.click("form button[type=submit].primary");
      await tab.page.waitForSelector(".key-held", WAIT);
      await visit(tab, `${org}/scans/${world.domain}`);
      await tab.page.waitForSelector("figure.chart text.axis", WAIT);
      const score = await tab.page.evaluate(() => ({
        rows: [...document.querySelectorAll("figure.chart table.numbers tbody th")].map((th: any) => th.textContent),
        axis: [...document.querySelectorAll("figure.chart text.axis")]
          .map((t: any) => t.textContent)
          .filter((t: string) => /^\d{4}-/.test(t)),
      }));
      expect([...score.rows].sort()).toEqual(points.map((p) => expected(zone, p.at)).sort());
      const instants = points.map((p) => Date.parse(p.at));
      const day = (ms: number) => expected(zone, new Date(ms).toISOString()).slice(0, 10);
      expect(score.axis).toEqual([day(Math.min(...instants)), day(Math.max(...instants))]);
      await clean(tab, `timezone-${label}-scan`);

      expect(tab.problems).toEqual([]);
      await tab.page.browserContext().close();
    });
  }
});

describe("time.ts, the dashboard's time formatting, in Node", () => {
  const iso = "2026-11-25T13:20:05.123Z";

  it("writes an instant on the zone's wall clock with the zone's short name", () => {
    expect(localTime(iso, "Asia/Kolkata")).toBe("2026-11-25 18:50 GMT+5:30");
    expect(localTime(iso, "America/New_York")).toBe("2026-11-25 08:20 EST");
    expect(localTime("2026-07-01T02:30:00Z", "America/New_York")).toBe("2026-06-30 22:30 EDT");
    expect(localTime(iso, "UTC")).toBe("2026-11-25 13:20 UTC");
    // 24-hour clock: midnight is 00, never 24.
    expect(localTime("2026-11-25T18:30:00Z", "Asia/Kolkata")).toBe("2026-11-26 00:00 GMT+5:30");
    expect(wallClock(Date.parse("2026-11-25T23:59:00Z"), "Pacific/Kiritimati")).toEqual({
      date: "2026-11-26",
      time: "13:59",
      zone: "GMT+14",
    });
  });

  it("keeps calendar dates and what is no time as they are", () => {
    expect(isDateOnly("2026-12-01")).toBe(true);
    expect(localTime("2026-12-01", "America/New_York")).toBe("2026-12-01");
    expect(utcTime("2026-12-01")).toBeNull();
    expect(localTime("soon", "Asia/Kolkata")).toBe("soon");
    expect(utcTime("soon")).toBeNull();
  });

  it("gives the exact UTC time for the title, the local day, and the service's (UTC) today", () => {
    expect(utcTime(iso)).toBe("2026-11-25 13:20:05 UTC");
    expect(utcTime("2026-11-25T14:20:05+01:00")).toBe("2026-11-25 13:20:05 UTC");
    expect(localDate(Date.parse("2026-11-25T20:00:00Z"), "Asia/Kolkata")).toBe("2026-11-26");
    expect(localDate(Date.parse("2026-11-25T03:00:00Z"), "America/New_York")).toBe("2026-11-24");
    expect(utcToday(Date.parse("2026-11-25T23:30:00-05:00"))).toBe("2026-11-26");
  });
});
