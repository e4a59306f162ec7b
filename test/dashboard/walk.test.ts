import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "../helpers/gateway.js";
import { nextLinks } from "../helpers/mail-links.js";
import { acceptInvitation, virtualAuthenticator } from "../helpers/passkey-browser.js";
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
  signInWithToken,
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
 * authenticator and walk the same pages with their session cookie, at both widths, with the same checks. Each page shows its data, refuses
 * nothing, and the admin API answers the tab no 403; the owner is offered each page's admin
 * actions, the member none of them (her buttons and fields are listed page by page), and the
 * operator's pages are not in her navigation and say they are not available to her role.
 *
 * Then, at both widths: an `admin` (Katherine, invited here through the admin API, signed in
 * with her invitation and a passkey), offered every admin action but the owner's (no
 * invitation, no token, the team page only her passkeys); a read-only organization token
 * (`scopes: ["read"]`), typed into /dashboard/token as the operator types the admin token,
 * offered no write of the admin API (its buttons and fields listed page by page, like the
 * member's); and a read-and-write organization token (`scopes: ["read","write"]`), typed in
 * the same way, offered what the admin is (every admin action but the owner's: tokens never
 * create tokens or members) and the read token's buttons and a finding's note, its team page
 * offering only each token's "Revoke" (no form, no passkey of its own). All three: the same
 * checks, the data of every page, no 403, the operator's pages not available.
 *
 * Last, at 390 px: a second `member` (Dorothy, invited here) whom nobody gave the server
 * key. Her pages are the member's, but the security pages (scans, a scan, findings, a
 * finding, activity) offer only the panel that takes a server key and show none of the
 * key's data; a client key pasted there is refused on the page, then the server key shows
 * the scan's findings.
 */

// Functions passed to page.evaluate run in the browser; this name is theirs.
declare const location: { search: string; pathname: string }, document: { body: { innerText: string }; querySelector(s: string): unknown };

let gw: TestGateway;
let harness: Harness;
let world: Made;
let smtp: SmtpSink;

let opened: DashboardWorld | undefined;
beforeAll(async () => {
  opened = await openDashboardWorld("walk");
  ({ gw, harness, world, smtp } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.stop();
});

/** Connects the server key the way a person does: pasted into the panel of the scans page. */
async function connectServerKey(tab: Tab): Promise<void> {
  await visit(tab, `/dashboard/orgs/${world.orgId}/scans`);
  await tab.page.type("input[type=password]", world.serverKey);
  await tab.page.click("form button[type=submit].primary");
  await tab.page.waitForSelector(".key-held", WAIT);
  await settled(tab.page);
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
      for (const { name, path } of dashboardPages(world)) {
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

// ---- the same pages as the organization's owner, an admin, a read-only member and a read-only token ----

/** Who is walked with a passkey session, and as what: fixtures.ts invites the owner and the member, signIn() the admin. */
const PEOPLE = {
  owner: { name: "Ada Lovelace", email: "ada@example.com", role: "owner" },
  admin: { name: "Katherine Johnson", email: "katherine@example.com", role: "admin" },
  member: { name: "Grace Hopper", email: "grace@example.com", role: "member" },
  /** A second `member`, invited here, whom nobody gave the server key. */
  keyless: { name: "Dorothy Vaughan", email: "dorothy@example.com", role: "member" },
} as const;
type Person = keyof typeof PEOPLE;

/**
 * The organization tokens walked, made through the admin API: a read-only one (`token`) and
 * a read-and-write one (`token-rw`), by their name (the page's header shows it and the scopes).
 */
const TOKENS = {
  token: { name: "Nightly report", scopes: ["read"] },
  "token-rw": { name: "Deploy bot", scopes: ["read", "write"] },
} as const;
type TokenReader = keyof typeof TOKENS;
/** Whoever walks the organization's pages: a member of a role, or an organization token. */
type Reader = Person | TokenReader;

function isToken(reader: Reader): reader is TokenReader {
  return reader in TOKENS;
}

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
  team: ["Remove", "Send the invitation", "Create the token"],
};
/**
 * Of those, the owner's alone, page by page (members and tokens; the dashboard has no
 * organization settings to change): an admin is offered every other one. Her team page is
 * listed exactly, as a member's: the tokens the walk made are listed without "Revoke", no
 * member has a "Remove" or a role to choose, and neither the invitation's nor the token's
 * form is there.
 */
const OWNER_ONLY: Record<string, string[]> = { team: ["Remove", "Send the invitation", "Create the token"] };

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

/**
 * A member whom nobody gave the server key: the security pages offer only the panel that
 * takes one (docs/dashboard.md, "The server key of the security pages"), and show what the
 * admin API has (the verified domains, the finding's key), none of the key's data; her
 * other pages are the member's.
 */
const KEY_FORM = { buttons: ["Use this key"], fields: ["Server key", "Its domain lock, if it has one"] };
const SECURITY_PAGES = ["scans", "scan", "findings", "finding", "activity"];
const ASK_FOR_ONE = "Your role does not create keys: ask an admin of the organization for one.";
const KEYLESS_DATA: Record<string, string[]> = {
  scans: ["shop.example.com", "Connect a server key", ASK_FOR_ONE],
  scan: ["shop.example.com", "Connect a server key", ASK_FOR_ONE],
  findings: ["Connect a server key", ASK_FOR_ONE],
  finding: ["tls:hsts", "Connect a server key", ASK_FOR_ONE],
  activity: ["Connect a server key", ASK_FOR_ONE],
};
/** What only the server key shows on those pages: she sees none of it. */
const KEY_DATA: Record<string, string[]> = {
  scan: ["strict-transport-security: max-age=300"],
  // The owners' addresses are in the page anyway: the owner filter lists the members.
  findings: ["Strict-Transport-Security", "SPF record"],
  finding: ["Strict-Transport-Security", "ada@example.com"],
};

/**
 * Every button a read-only token is offered: the member's less what would write through the
 * admin API with it (a note: POST, refused `insufficient_scope`) and what only a member has
 * (a passkey). What the server key does stays: the key is its own credential, which the
 * token neither grants nor limits (docs/dashboard.md, "The server key of the security pages").
 */
const TOKEN_MAY: Record<string, string[]> = {
  "key-integration": ["Copy"],
  domains: ["Copy"],
  scans: KEY_PANEL,
  scan: [...KEY_PANEL, "Run a fresh scan"],
  findings: KEY_PANEL,
  finding: [...KEY_PANEL, "Save", "Re-check now"],
  activity: KEY_PANEL,
};
/** The fields a read-only token may fill in, outside the filters: the finding's owner, status and due date (the server key's assignment). */
const TOKEN_FIELDS: Record<string, string[]> = { finding: ["Owner", "Status", "Due"] };

/**
 * A read-and-write token is offered what the read-only one is and, as an admin is, every
 * admin action but the owner's (tokens never create tokens or members: 403 `forbidden`);
 * and a finding's note, the admin API's POST its write scope allows. Its team page is listed
 * exactly: each token listed with "Revoke" (the API lets it revoke tokens, never make one),
 * and nothing else to press (no form, no passkey).
 */
const WRITE_TOKEN_ALSO: Record<string, string[]> = { finding: ["Add the note"] };

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

/** The buttons and fields a reader is offered on a page, when listed exactly: nothing else. */
function exactly(reader: Reader, name: string): { buttons: string[]; fields: string[] } | null {
  if (reader === "keyless" && SECURITY_PAGES.includes(name)) return KEY_FORM;
  if (reader === "member" || reader === "keyless") return { buttons: MEMBER_MAY[name] ?? [], fields: MEMBER_FIELDS[name] ?? [] };
  if (reader === "token") return { buttons: TOKEN_MAY[name] ?? [], fields: TOKEN_FIELDS[name] ?? [] };
  if (reader === "admin" && name === "team") return { buttons: MEMBER_MAY.team, fields: [] };
  if (reader === "token-rw" && name === "team") return { buttons: ["Revoke"], fields: [] };
  return null;
}

/** The admin actions of a page a reader is offered: all of them to the owner, all but the owner's to an admin and a write token. */
function adminActions(reader: Reader, name: string): string[] {
  if (reader === "owner") return ADMIN_ACTIONS[name] ?? [];
  if (reader === "admin" || reader === "token-rw")
    return (ADMIN_ACTIONS[name] ?? []).filter((action) => !(OWNER_ONLY[name] ?? []).includes(action));
  return [];
}

/** What a page offers its reader: every admin action they may take, and where listed exactly, nothing else. */
function checkOffers(reader: Reader, name: string, s: Seen, where: string): void {
  for (const action of adminActions(reader, name)) expect(s.buttons, `${where} offers ${action}`).toContain(action);
  if (reader === "admin" || reader === "token-rw")
    for (const action of OWNER_ONLY[name] ?? []) expect(s.buttons, `${where} does not offer ${action}`).not.toContain(action);
  if (reader === "token-rw")
    for (const button of [...(TOKEN_MAY[name] ?? []), ...(WRITE_TOKEN_ALSO[name] ?? [])])
      expect(s.buttons, `${where} offers ${button}`).toContain(button);
  const only = exactly(reader, name);
  if (only === null) return;
  expect([...new Set(s.buttons)].sort(), `${where}: buttons`).toEqual([...only.buttons].sort());
  expect(s.fields, `${where}: fields`).toEqual(only.fields);
}

/** One tab per reader, signed in once and kept (the owner's and the member's for both widths). */
const tabs: Partial<Record<Reader, Promise<Tab>>> = {};
/** The tab's admin API answers 403: a page asking for what its reader may not have. */
const forbidden: Record<Reader, string[]> = { owner: [], admin: [], member: [], keyless: [], token: [], "token-rw": [] };

function signedIn(reader: Reader): Promise<Tab> {
  tabs[reader] ??= isToken(reader) ? signInAsToken(reader) : signIn(reader);
  return tabs[reader];
}

/** Opens a tab on the gateway's site that notes the 403s. */
async function openTab(reader: Reader): Promise<Tab> {
  const tab = await harness.open("wide", { site: true });
  tab.page.on("response", (response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith("/admin/v1/") && response.status() === 403)
      forbidden[reader].push(`${response.request().method()} ${url.pathname}`);
  });
  return tab;
}

async function signIn(person: Person): Promise<Tab> {
  const { name, email, role } = PEOPLE[person];
  // The admin and the keyless member are invited here (fixtures.ts has the others), as the operator does: the invitation goes by e-mail.
  const invitedHere = person === "admin" || person === "keyless";
  const after = smtp.mails.length;
  if (invitedHere) {
    const invited = await gw.admin("POST", `/orgs/${world.orgId}/members`, { name, email, role });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  }
  const tab = await openTab(person);
  await virtualAuthenticator(tab.page);
  const [link] = await nextLinks(smtp, email, invitedHere ? after : 0);
  await acceptInvitation(tab.page, link, world.orgId, `${name}'s laptop`);
  expect(await tab.page.evaluate(() => document.body.innerText)).toContain(`${name} (${role})`);
  // Someone gave her the server key; the security pages take it as any browser would.
  if (person !== "keyless") await connectServerKey(tab);
  return tab;
}

/** The tokens, made through the admin API (as the owner's team page would make them), each shown once. */
const tokenValues: Partial<Record<TokenReader, string>> = {};

async function makeTokens(): Promise<void> {
  for (const reader of Object.keys(TOKENS) as TokenReader[]) {
    const made = await gw.admin("POST", `/orgs/${world.orgId}/tokens`, { name: TOKENS[reader].name, scopes: TOKENS[reader].scopes });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    tokenValues[reader] = made.body.token;
  }
}

/** Typed into /dashboard/token as the operator types the admin token; it lands on its organization's overview. */
async function signInAsToken(reader: TokenReader): Promise<Tab> {
  const tab = await openTab(reader);
  await signInWithToken(tab, tokenValues[reader] ?? "", `/dashboard/orgs/${world.orgId}`);
  expect(new URL(tab.page.url()).pathname).toBe(`/dashboard/orgs/${world.orgId}`);
  const { name, scopes } = TOKENS[reader];
  expect(await tab.page.evaluate(() => document.body.innerText)).toContain(`Token ${name} (${scopes.join(" + ")})`);
  // Whoever holds the token was given the server key too, as the member was.
  await connectServerKey(tab);
  return tab;
}

/** Every page as the reader at one width: the checks, the data, no refusal, what it offers; the operator's pages closed. */
async function walk(reader: Reader, width: Width): Promise<void> {
  const tab = await signedIn(reader);
  // The same tab and session at both widths; every visit is still a full load.
  await tab.page.setViewport({ width: WIDTHS[width], height: width === "narrow" ? 844 : 900, deviceScaleFactor: 1 });
  for (const { name, path } of dashboardPages(world)) {
    await visit(tab, path);
    await check(tab, `${reader}-${name}`, width);
    const s = await seen(tab);
    const where = `${reader} on ${name} at ${WIDTHS[width]} px`;
    expect(s.refusals, where).toEqual([]);
    if (name.startsWith("operator")) {
      // Not the operator's pages: a page that says so, nothing to press, a way back.
      expect(s.text, where).toContain("Not available to your role.");
      expect(s.buttons, where).toEqual([]);
      expect(await tab.page.$(`main a[href="/dashboard/orgs/${world.orgId}"]`), where).not.toBeNull();
      continue;
    }
    const keyless = reader === "keyless" && SECURITY_PAGES.includes(name);
    for (const data of keyless ? KEYLESS_DATA[name] : DATA[name]) expect(s.text, `${where} shows ${data}`).toContain(data);
    if (keyless) for (const data of KEY_DATA[name] ?? []) expect(s.text, `${where} does not show ${data}`).not.toContain(data);
    checkOffers(reader, name, s, where);
  }
  // Nothing the navigation offers leads to the operator's pages.
  expect(await tab.page.$("a[href^='/dashboard/operator']")).toBeNull();
  expect(tab.problems).toEqual([]);
  expect(forbidden[reader]).toEqual([]);
}

describe.each(["owner", "member"] as const)("the dashboard, walked by the organization's %s (passkey session)", (role) => {
  for (const width of ["wide", "narrow"] as const) {
    it(`every page at ${WIDTHS[width]} px: settles, no errors, axe clean; ${role === "owner" ? "every admin action offered" : "no admin action offered, the operator's page not available"}`, async () => {
      await walk(role, width);
    });
  }
});

describe("the dashboard, walked by an organization admin (passkey session) and two organization tokens", () => {
  // Before the admin's walk: her team page lists the tokens, which only an owner may revoke.
  beforeAll(makeTokens);

  for (const width of ["wide", "narrow"] as const) {
    it(`the admin at ${WIDTHS[width]} px: every page settles, no errors, axe clean; every admin action but the owner's offered, the operator's page not available`, async () => {
      await walk("admin", width);
    });

    it(`the read-only token, typed on the sign-in page, at ${WIDTHS[width]} px: every page settles, no errors, axe clean; no admin API write offered, the operator's page not available`, async () => {
      await walk("token", width);
    });

    it(`the read-and-write token, typed on the sign-in page, at ${WIDTHS[width]} px: every page settles, no errors, axe clean; every admin action but the owner's offered, the operator's page not available`, async () => {
      await walk("token-rw", width);
    });
  }
});

// One width (the pages are the member's, walked at both above): what a member sees before anyone gives her the server key.
describe("the dashboard at 390 px, walked by a member whom nobody gave the server key (passkey session)", () => {
  it("every page settles, no errors, axe clean; the security pages offer only the server key's panel and show none of the key's data", async () => {
    await walk("keyless", "narrow");
  });

  it("she pastes a client key first (refused on the page, nothing stored), then the server key: the scan's findings appear", async () => {
    const tab = await signedIn("keyless");
    await visit(tab, `/dashboard/orgs/${world.orgId}/scans/${world.domain}`);
    await tab.page.type("input[type=password]", world.clientKey);
    await tab.page.click("form button[type=submit].primary");
    await tab.page.waitForSelector("main .refusal", WAIT);
    const refused = await seen(tab);
    expect(refused.refusals.join(" ")).toContain("Server keys start sk_live_ or sk_test_.");
    expect(refused.text).not.toContain(KEY_DATA.scan[0]);
    // Nothing kept: a fresh load of the page asks for a key again.
    await visit(tab, `/dashboard/orgs/${world.orgId}/scans/${world.domain}`);
    expect(await tab.page.$(".key-held")).toBeNull();
    await tab.page.type("input[type=password]", world.clientKey);
    await tab.page.click("form button[type=submit].primary");
    await tab.page.waitForSelector("main .refusal", WAIT);
    await check(tab, "keyless-refused", "narrow");
    // The field still holds what she typed: she clears it and pastes the right one.
    await tab.page.$eval("input[type=password]", (input) => {
      (input as unknown as { value: string }).value = "";
    });
    await tab.page.type("input[type=password]", world.serverKey);
    await tab.page.click("form button[type=submit].primary");
    await tab.page.waitForSelector(".key-held", WAIT);
    await settled(tab.page);
    const connected = await seen(tab);
    expect(connected.refusals).toEqual([]);
    expect(connected.text).toContain(KEY_DATA.scan[0]);
    expect(connected.buttons).toEqual(expect.arrayContaining([...KEY_PANEL, "Run a fresh scan"]));
    await check(tab, "keyless-connected", "narrow");
    expect(tab.problems).toEqual([]);
  });
});
