import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDashboardWorld, type DashboardWorld } from "./fixtures.js";
import { WAIT, axe, settled, shot, signInWithToken, visit } from "./harness.js";

/**
 * A key's installations come in pages (docs/accounts.md "Lists"): with more than a page of
 * them, the installations tab shows 50, newest first, and a pager that walks to the rest,
 * the page kept in the address.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, location: any;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("installations-pager");
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

describe("the installations tab with more than a page", () => {
  it("shows 50, newest first, and walks to the rest with the pager", async () => {
    const { gw, world, harness } = opened as DashboardWorld;
    // 60 installations the usage actor wrote down, one a minute, install-59 the newest.
    const start = Date.now() - 3_600_000;
    for (let i = 0; i < 60; i++) {
      const at = new Date(start + i * 60_000);
      await gw.ctx.db.query(
        "INSERT INTO installations (key_id, install, status, first_seen_at, last_seen_at) VALUES ($1, $2, 'approved', $3, $3) ON CONFLICT DO NOTHING",
        [world.clientKeyId, `install-${String(i).padStart(2, "0")}`, at],
      );
    }
    const total = (await gw.admin("GET", `/keys/${world.clientKeyId}/installations?limit=1`)).body.total as number;
    expect(total).toBeGreaterThanOrEqual(60);

    const token = await gw.admin("POST", `/orgs/${world.orgId}/tokens`, { name: "pager", scopes: ["read"] });
    expect(token.status).toBe(201);
    const tab = await harness.open("wide");
    await signInWithToken(tab, token.body.token, `/dashboard/orgs/${world.orgId}`);
    const path = `/dashboard/orgs/${world.orgId}/keys/${world.clientKeyId}?tab=installations`;
    await visit(tab, path);
    await tab.page.waitForSelector("nav.pager", WAIT);
    const names = () => tab.page.$$eval("table tbody tr th", (cells: any[]) => cells.map((c) => c.textContent.trim()));
    const first = await names();
    expect(first).toHaveLength(50);
    expect(first).toContain("install-59");
    expect(first).not.toContain("install-00");
    expect(await tab.page.$eval("nav.pager", (e: any) => e.textContent)).toContain(`(${total} entries)`);
    expect(await axe(tab.page)).toEqual([]);
    await shot(harness, tab.page, "installations-page-1");

    await tab.page.click("nav.pager a[rel=next]");
    await tab.page.waitForFunction(() => new URLSearchParams(location.search).get("page") === "2", WAIT);
    await tab.page.waitForFunction(
      () => [...document.querySelectorAll("table tbody tr th")].some((c: any) => c.textContent.trim() === "install-00"),
      WAIT,
    );
    await settled(tab.page);
    const second = await names();
    expect(second).toHaveLength(total - 50);
    // Together the two pages are every installation, once.
    expect(new Set([...first, ...second]).size).toBe(total);
    expect(await tab.page.$("nav.pager a[rel=prev]")).not.toBeNull();
    expect(tab.problems).toEqual([]);
    await tab.page.browserContext().close();
  }, 90_000);
});
