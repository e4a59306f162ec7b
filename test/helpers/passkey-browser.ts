import type { CDPSession, Page } from "puppeteer-core";
import { WAIT } from "./browser-wait.js";
import type { TestGateway } from "./gateway.js";

/**
 * A member's way into the dashboard in Chromium, shared by the passkey test
 * (test/embed/passkeys.test.ts) and the owner's day (test/dashboard/day.test.ts): a CDP
 * virtual authenticator, the sign-in and invitation pages' states, and the SPA settled on an
 * address. WebAuthn needs a relying party with a host name, so these gateways run with
 * `SITE_URL` `http://localhost:0` and Chromium resolves localhost to the IPv4 listener.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs.
declare const document: any, location: { pathname: string };

/** Chromium's arguments sending localhost (and *.localhost) to the gateway's IPv4 listener (it would also try ::1). */
export const LOCALHOST_RESOLVER = "--host-resolver-rules=MAP localhost 127.0.0.1, MAP *.localhost 127.0.0.1";

/** The gateway's site (`http://localhost:PORT`), where the sign-in pages and the dashboard are. */
export function siteOf(gw: TestGateway): string {
  return gw.ingress.deps.baseUrl().replace(/\/api\/v1$/, "");
}

export interface Authenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/** A virtual authenticator on the page's browser (ctap2, internal, resident keys, user verification, presence given). */
export async function virtualAuthenticator(page: Page): Promise<Authenticator> {
  const cdp = await page.createCDPSession();
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** Waits for a sign-in or invitation page to be in `wanted` (its body's data-state); a time-out says where the page stood. */
export async function pageState(page: Page, wanted: string): Promise<void> {
  try {
    await page.waitForFunction((s: string) => document.body?.getAttribute("data-state") === s, WAIT, wanted);
  } catch (error) {
    const seen = await page
      .evaluate(
        () => `${location.pathname} data-state=${document.body?.getAttribute("data-state")} text=${document.body?.innerText.slice(0, 200)}`,
      )
      .catch(() => "unreadable");
    throw new Error(`page never reached data-state=${wanted}: ${seen}`, { cause: error });
  }
}

/** The SPA's page for `path`, settled: a heading, nothing loading. */
export async function dashboardAt(page: Page, path: string): Promise<void> {
  await page.waitForFunction(
    (p: string) =>
      document.location.pathname === p &&
      document.querySelector("main h1") !== null &&
      document.querySelector("[aria-busy='true']") === null &&
      document.querySelector(".boot") === null,
    WAIT,
    path,
  );
}

/**
 * Opens an invitation link, names the passkey and creates it (the page's authenticator
 * answers): the verify answer opens the session and the page goes on to the dashboard,
 * which resumes it; waits for the organization's overview.
 */
export async function acceptInvitation(page: Page, link: string, orgId: number, passkeyName = ""): Promise<void> {
  await page.goto(link, { waitUntil: "load" });
  await pageState(page, "invited");
  if (passkeyName !== "") await page.type("#passkey-name", passkeyName);
  await page.click("#create-passkey");
  await dashboardAt(page, `/dashboard/orgs/${orgId}`);
}
