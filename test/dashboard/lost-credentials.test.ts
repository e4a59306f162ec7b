import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDashboardWorld, type DashboardWorld } from "./fixtures.js";
import { WAIT, settled, signInWithToken, visit } from "./harness.js";

/**
 * A tab whose credential is taken away (a token revoked, a session ended elsewhere) forgets
 * the server key it held: the key was entered under that credential, and whoever signs in
 * next in the tab must not query with it.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const sessionStorage: any, location: any;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("lost-credentials");
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

describe("credentials taken away", () => {
  it("a revoked token's tab forgets the server key it held", async () => {
    const { gw, world, harness } = opened as DashboardWorld;
    const made = await gw.admin("POST", `/orgs/${world.orgId}/tokens`, { name: "laptop", scopes: ["read", "write"] });
    expect(made.status).toBe(201);
    const tab = await harness.open("wide");
    await signInWithToken(tab, made.body.token, `/dashboard/orgs/${world.orgId}`);
    await visit(tab, `/dashboard/orgs/${world.orgId}/scans`);
    await tab.page.type("input[type=password]", world.serverKey);
    await tab.page.click("form button[type=submit].primary");
    await tab.page.waitForSelector(".key-held", WAIT);
    const held = () => tab.page.evaluate(() => sessionStorage.getItem("gw.dashboard.server-key"));
    expect(await held()).not.toBeNull();

    expect((await gw.admin("DELETE", `/orgs/${world.orgId}/tokens/${made.body.details.id}`)).status).toBe(200);
    // The next page's API call answers 401: the tab falls back to signing in, without the key.
    await tab.page.goto(`${tab.origin}/dashboard/orgs/${world.orgId}/keys`, { waitUntil: "domcontentloaded" });
    await tab.page.waitForFunction(() => location.pathname === "/dashboard/token" || location.pathname === "/dashboard/signin", WAIT);
    await settled(tab.page);
    expect(await held()).toBeNull();
    await tab.page.browserContext().close();
  }, 60_000);
});
