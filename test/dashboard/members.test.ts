import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "../helpers/gateway.js";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, virtualAuthenticator } from "../helpers/passkey-browser.js";
import type { SmtpSink } from "../helpers/smtp-sink.js";
import { openDashboardWorld, type DashboardWorld, type Made } from "./fixtures.js";
import { WAIT, axe, cspViolations, settled, visit, type Harness, type Tab } from "./harness.js";

/**
 * The owner's controls of the team page (docs/accounts.md "Members", docs/dashboard.md): a
 * role selector and a Remove button, with a confirmation, on each member's row. The owner
 * (Ada, fixtures.ts) signs in with her invitation and a passkey, changes a member's role,
 * cancels a removal and then confirms one; the page says what happened and the admin API
 * agrees; her own role, as the last owner, stays. A member (Grace) is offered neither.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any;

let gw: TestGateway;
let harness: Harness;
let world: Made;
let smtp: SmtpSink;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("members");
  ({ gw, harness, world, smtp } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

/** A tab signed in by the member the fixtures invited at `email`: her invitation and a new passkey. */
async function signedIn(email: string): Promise<Tab> {
  const tab = await harness.open("wide", { site: true });
  await virtualAuthenticator(tab.page);
  const [link] = await nextLinks(smtp, email, 0);
  await acceptInvitation(tab.page, link, world.orgId);
  return tab;
}

async function members(): Promise<{ id: number; email: string; role: string }[]> {
  return (await gw.admin("GET", `/orgs/${world.orgId}/members`)).body.members;
}

/** The row of the members' table naming `email`, as a CSS-free handle: its index among the rows. */
async function rowOf(tab: Tab, email: string): Promise<number> {
  const index = await tab.page.evaluate(
    (e: string) => [...document.querySelectorAll("table tbody tr")].findIndex((tr: any) => tr.textContent.includes(e)),
    email,
  );
  expect(index, email).toBeGreaterThanOrEqual(0);
  return index;
}

const row = (index: number) => `table tbody tr:nth-child(${index + 1})`;

async function outcome(tab: Tab): Promise<string> {
  await tab.page.waitForFunction(() => document.querySelector(".outcome")?.textContent.trim() !== "", WAIT);
  return tab.page.$eval(".outcome", (e: any) => e.textContent.trim());
}

describe("the team page's member controls", () => {
  it("the owner changes a role, cancels a removal, confirms one; the last owner keeps her role", async () => {
    const org = world.orgId;
    for (const [name, email, role] of [
      ["Katherine Johnson", "katherine@example.com", "member"],
      ["Dorothy Vaughan", "dorothy@example.com", "admin"],
    ] as const) {
      expect((await gw.admin("POST", `/orgs/${org}/members`, { name, email, role })).status).toBe(201);
    }
    const ada = await signedIn("ada@example.com");
    await visit(ada, `/dashboard/orgs/${org}/team`);

    // Each member's row: the role as a labelled selector, and Remove.
    const selects = await ada.page.$$eval("table tbody select", (all: any[]) => all.map((s) => [s.getAttribute("aria-label"), s.value]));
    expect(selects).toEqual(
      expect.arrayContaining([
        ["Role of Ada Lovelace", "owner"],
        ["Role of Grace Hopper", "member"],
        ["Role of Katherine Johnson", "member"],
        ["Role of Dorothy Vaughan", "admin"],
      ]),
    );
    const removes = await ada.page.$$eval("table tbody td > button.danger", (all: any[]) => all.map((b) => b.textContent.trim()));
    expect(removes).toEqual(["Remove", "Remove", "Remove", "Remove"]);
    expect(await axe(ada.page)).toEqual([]);

    // A role, chosen: changed at once, and said.
    const katherine = await rowOf(ada, "katherine@example.com");
    await ada.page.select(`${row(katherine)} select`, "admin");
    expect(await outcome(ada)).toBe("katherine@example.com is now admin, from their next request.");
    expect((await members()).find((m) => m.email === "katherine@example.com")?.role).toBe("admin");

    // Remove asks first; Cancel leaves everyone in place.
    const dorothy = await rowOf(ada, "dorothy@example.com");
    await ada.page.click(`${row(dorothy)} td > button.danger`);
    await ada.page.waitForSelector("dialog[open]", WAIT);
    expect(await ada.page.$eval("dialog[open] h2", (e: any) => e.textContent)).toBe(
      "Remove Dorothy Vaughan <dorothy@example.com> from the organization?",
    );
    expect(await axe(ada.page)).toEqual([]);
    await ada.page.click("dialog[open] .actions button[type=button]");
    await ada.page.waitForFunction(() => document.querySelector("dialog[open]") === null, WAIT);
    expect((await members()).map((m) => m.email)).toContain("dorothy@example.com");

    // A token Dorothy made (as an owner, before she was made admin) goes with her.
    const dorothyId = (await members()).find((m) => m.email === "dorothy@example.com")?.id;
    await gw.ctx.db.query(
      `INSERT INTO org_tokens (org_id, name, token_hash, prefix, scopes, created_by, created_by_member, created_at)
       VALUES ($1, 'deploy', $2, 'ot_test', '{read}', 'Dorothy Vaughan <dorothy@example.com>', $3, now())`,
      [org, Buffer.alloc(32, 9), dorothyId],
    );

    // Confirmed: she is gone, from the API and from the page.
    await ada.page.click(`${row(dorothy)} td > button.danger`);
    await ada.page.waitForSelector("dialog[open]", WAIT);
    await ada.page.click("dialog[open] button[type=submit]");
    await ada.page.waitForFunction(
      () => ![...document.querySelectorAll("table tbody tr")].some((tr: any) => tr.textContent.includes("dorothy@example.com")),
      WAIT,
    );
    expect(await outcome(ada)).toBe("dorothy@example.com is removed: their sessions have ended. 1 token they made is revoked.");
    expect((await members()).map((m) => m.email)).not.toContain("dorothy@example.com");

    // The last owner cannot step down: refused, said, and the selector shows her role again.
    const self = await rowOf(ada, "ada@example.com");
    await ada.page.select(`${row(self)} select`, "member");
    expect(await outcome(ada)).toContain("last owner");
    await ada.page.waitForFunction((r: string) => document.querySelector(`${r} select`)?.value === "owner", WAIT, row(self));
    expect((await members()).find((m) => m.email === "ada@example.com")?.role).toBe("owner");
    await settled(ada.page);
    expect(await cspViolations(ada.page)).toEqual([]);
    expect(ada.problems).toEqual([]);
    await ada.page.browserContext().close();
  });

  it("a member is offered neither: each role is a label, and there is no Remove", async () => {
    const grace = await signedIn("grace@example.com");
    await visit(grace, `/dashboard/orgs/${world.orgId}/team`);
    expect(await grace.page.$$("table tbody select")).toHaveLength(0);
    expect(await grace.page.$$("table tbody button")).toHaveLength(0);
    expect(await grace.page.evaluate(() => document.body.innerText)).toContain("Only an owner invites members or changes their roles.");
    expect(grace.problems).toEqual([]);
    await grace.page.browserContext().close();
  });
});
