import { mkdirSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEmbed } from "../../ops/embed/build.js";
import { type Interaction, judgeInteraction } from "../../shared/botcheck/interaction.js";
import { DEFAULT_DIFFICULTY, NO_EVIDENCE_EXTRA_BITS, proofBits } from "../../shared/botcheck/proof.js";
import { EMBED_DIR, type EmbedManifest } from "../../shared/embed/asset.js";
import { sourcePath } from "../../shared/platform/paths.js";
import { WAIT } from "../helpers/browser-wait.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain, type MadeKey } from "../ingress/routes/verify-fixtures.js";
import { startPageServer, type PageServer } from "./page-server.js";

/**
 * botcheck.js in a real browser (Debian's chromium, headless, driven by puppeteer-core)
 * against the real gateway. One browser for the file; every test opens its own
 * incognito context, so storage never leaks between tests.
 */

// Functions passed to page.evaluate run in the browser; these names are theirs (module scope only:
// pulling the DOM library into the test program would change Node's fetch types for every test).
declare const document: any, window: any, sessionStorage: any, location: any, Navigator: any, performance: any, PerformanceObserver: any;

const SITE = "site.localhost";
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const METADATA = {
  brands: [
    { brand: "Chromium", version: "156" },
    { brand: "Not)A;Brand", version: "24" },
  ],
  fullVersion: "156.0.0.0",
  platform: "Linux",
  platformVersion: "6.1.0",
  architecture: "x86",
  model: "",
  mobile: false,
};
const SHOTS = sourcePath("dist", "screenshots");

let gw: TestGateway;
let browser: Browser;
let pages: PageServer;
let manifest: EmbedManifest;
let orgId: number;
let key: MadeKey;

beforeAll(async () => {
  manifest = await buildEmbed(EMBED_DIR);
  gw = await startTestGateway("embed-widget");
  orgId = await makeOrg(gw, { plan: "professional" });
  await verifyDomain(gw, orgId, SITE);
  key = await makeKey(gw, orgId, { domain: SITE, botcheck: { enabled: true, hold_ms: 1500 } });
  pages = await startPageServer(gw.url, manifest.version);
  browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    // Every *.localhost name to the page server's address (Chromium would also try ::1).
    args: [
      "--no-sandbox",
      "--disable-blink-features=AutomationControlled",
      "--host-resolver-rules=MAP *.localhost 127.0.0.1",
      "--lang=en-US",
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await gw?.stop();
});

/** A visitor whose browser looks like desktop Chrome (no Headless marks, notifications consistent). */
async function humanPage(host = SITE): Promise<Page> {
  const context = await browser.createBrowserContext();
  await context.overridePermissions(`http://${host}:${pages.port}`, ["notifications"]);
  const page = await context.newPage();
  await page.setUserAgent({ userAgent: UA, userAgentMetadata: METADATA });
  await page.setExtraHTTPHeaders({ "accept-language": "en-US,en;q=0.9" });
  return page;
}

async function open(page: Page, query: Record<string, string>, host = SITE): Promise<void> {
  await page.goto(pages.url(host, { key: key.key, ...query }), { waitUntil: "load" });
}

const state = (page: Page, wanted: string) =>
  page.waitForFunction((s) => document.getElementById("widget")?.getAttribute("data-state") === s, WAIT, wanted);

/**
 * Moves the mouse to the button and presses it. `hand`: a curve, slow at both ends and fast
 * in the middle, with a pixel of tremor (judged `human`); `straight`: puppeteer's own
 * interpolation, a ruler-straight line (judged no evidence: the proof needs two bits more).
 */
async function holdButton(page: Page, path: "hand" | "straight" = "hand"): Promise<{ x: number; y: number }> {
  const box = await page.evaluate(() => {
    const r = document.getElementById("widget")!.shadowRoot!.querySelector("button")!.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  const from = { x: box.x + 150, y: box.y + 70 };
  await page.mouse.move(from.x, from.y);
  if (path === "straight") {
    await page.mouse.move(box.x, box.y, { steps: 12 });
  } else {
    const steps = 30;
    for (let i = 1; i <= steps; i++) {
      const t = (1 - Math.cos((Math.PI * i) / steps)) / 2;
      const bend = Math.sin(Math.PI * t) * 30;
      const tremor = i < steps ? (i % 3) - 1 : 0;
      await page.mouse.move(from.x + (box.x - from.x) * t + tremor, from.y + (box.y - from.y) * t - bend);
    }
  }
  await page.mouse.down();
  return box;
}

/** The grants the page sends (their JSON bodies), as the service reads them. */
function grantsOf(page: Page): Record<string, unknown>[] {
  const grants: Record<string, unknown>[] = [];
  page.on("request", (request) => {
    if (!request.url().includes("/botcheck.php") || request.method() !== "POST") return;
    const body = JSON.parse(request.postData() ?? "{}") as Record<string, unknown>;
    if (body.action === "grant" || body.action === "solve") grants.push(body);
  });
  return grants;
}

/** Leading zero bits of a grant's proof for its nonce, and the verdict on its evidence. */
const judged = (grant: Record<string, unknown>) => ({
  bits: proofBits(String(grant.nonce), Number(grant.proof)),
  evidence: judgeInteraction(grant.interaction as Interaction),
});

const result = (page: Page) => page.evaluate(() => (window as unknown as { __result: Promise<Record<string, unknown>> }).__result);
const csp = (page: Page) => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);

describe("botcheck.js in chromium", () => {
  it("is served gzip with long cache headers on its versioned URL", async () => {
    const versioned = await fetch(`${gw.url}/botcheck.js?v=${manifest.version}`, { headers: { "accept-encoding": "gzip" } });
    expect(versioned.status).toBe(200);
    expect(versioned.headers.get("content-encoding")).toBe("gzip");
    expect(versioned.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(versioned.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const body = await versioned.text(); // fetch gunzips
    expect(Buffer.byteLength(body)).toBe(manifest.bytes);
    expect(body).not.toMatch(/\beval\(|new Function\(/);
    const bare = await gw.call("/botcheck.js");
    expect(bare.headers.get("cache-control")).toBe("public, max-age=300");
    const again = await fetch(`${gw.url}/botcheck.js`, { headers: { "if-none-match": bare.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
    expect(manifest.bytes).toBeLessThan(18_000);
  });

  it("a human-like press-and-hold passes and stores a token; the returning visitor is verified", async () => {
    const page = await humanPage();
    const grants = grantsOf(page);
    await open(page, { lang: "en" });
    await state(page, "challenge");
    const ready = await page.evaluate(() => Number(document.getElementById("widget")!.getAttribute("data-ready")));
    console.log(`botcheck.js time to interactive: ${ready.toFixed(0)} ms from navigation start`);
    await holdButton(page);
    await state(page, "passed");
    await page.mouse.up();
    const passed = await result(page);
    expect(passed).toMatchObject({ enforced: true, verified: false, token: expect.any(String) });
    // The hand's approach is judged human: the proof reaches the key's difficulty (the default).
    expect(grants).toHaveLength(1);
    expect(judged(grants[0]).evidence).toBe("human");
    expect(judged(grants[0]).bits).toBeGreaterThanOrEqual(DEFAULT_DIFFICULTY);
    const stored = await page.evaluate((k) => sessionStorage.getItem(`gateway_botcheck:${k}`), key.key);
    expect(stored).toBe(passed.token);
    const live = await page.evaluate(() => document.getElementById("widget")!.shadowRoot!.querySelector("[role=status]")!.textContent);
    expect(live).toBe("Verified. Thank you!");
    await page.reload({ waitUntil: "load" });
    await state(page, "passed");
    expect(await result(page)).toMatchObject({ enforced: true, verified: true });
    expect(await page.evaluate(() => document.getElementById("widget")!.shadowRoot?.querySelector("button") ?? null)).toBeNull();
    expect(await csp(page)).toEqual([]);
    await page.browserContext().close();
  });

  it("releasing early gets hold_too_short and a fresh challenge", async () => {
    const page = await humanPage();
    await open(page, { lang: "en", storage: "none" });
    await state(page, "challenge");
    await holdButton(page);
    await page.mouse.up();
    await page.waitForFunction(() => document.getElementById("widget")?.getAttribute("data-last-reason") === "hold_too_short", WAIT);
    await state(page, "challenge");
    const live = await page.evaluate(() => document.getElementById("widget")!.shadowRoot!.querySelector("[role=status]")!.textContent);
    expect(live).toBe("Released too soon. Hold until the circle is full.");
    // The fresh challenge can still be passed.
    await holdButton(page);
    await state(page, "passed");
    await page.mouse.up();
    expect(await result(page)).toMatchObject({ token: expect.any(String) });
    await page.browserContext().close();
  });

  it("keyboard only: Tab to the button and hold Space (check/solve vocabulary, token in a cookie)", async () => {
    const page = await humanPage();
    const grants = grantsOf(page);
    await open(page, { lang: "en", storage: "cookie", actions: "check" });
    await state(page, "challenge");
    await page.keyboard.press("Tab"); // the link
    await page.keyboard.press("Tab"); // the widget's button
    const focused = await page.evaluate(() => document.getElementById("widget")!.shadowRoot!.activeElement?.tagName ?? null);
    expect(focused).toBe("BUTTON");
    await page.keyboard.down("Space");
    await state(page, "passed");
    await page.keyboard.up("Space");
    const passed = await result(page);
    expect(passed.token).toEqual(expect.any(String));
    // A keyboard hold has no trail: it passes with the proof two bits harder.
    expect(judged(grants[0])).toEqual({ bits: expect.any(Number), evidence: "absent" });
    expect(judged(grants[0]).bits).toBeGreaterThanOrEqual(DEFAULT_DIFFICULTY + NO_EVIDENCE_EXTRA_BITS);
    expect(await page.evaluate(() => document.cookie)).toContain(`gateway_botcheck=${encodeURIComponent(String(passed.token))}`);
    await page.browserContext().close();
  });

  it("a ruler-straight approach (puppeteer's own moves) is no evidence: it passes with the harder proof", async () => {
    const page = await humanPage();
    const grants = grantsOf(page);
    await open(page, { lang: "en", storage: "none" });
    await state(page, "challenge");
    await holdButton(page, "straight");
    await state(page, "passed");
    await page.mouse.up();
    expect(await result(page)).toMatchObject({ token: expect.any(String) });
    expect(judged(grants[0]).evidence).toBe("absent");
    expect(judged(grants[0]).bits).toBeGreaterThanOrEqual(DEFAULT_DIFFICULTY + NO_EVIDENCE_EXTRA_BITS);
    await page.browserContext().close();
  });

  it("solves in slices: the longest task while the proof is searched is printed (PerformanceObserver longtask)", async () => {
    // A long search: difficulty 20 and a keyboard hold, so 2^22 hashes are expected (seconds of work).
    const hard = await makeKey(gw, orgId, { domain: SITE, botcheck: { enabled: true, hold_ms: 1500, difficulty: 20 } });
    const page = await humanPage();
    const grants = grantsOf(page);
    await page.evaluateOnNewDocument(() => {
      const tasks: { start: number; duration: number }[] = [];
      (window as unknown as { __tasks: typeof tasks }).__tasks = tasks;
      new PerformanceObserver((list: { getEntries(): { startTime: number; duration: number }[] }) => {
        for (const entry of list.getEntries()) tasks.push({ start: entry.startTime, duration: entry.duration });
      }).observe({ type: "longtask", buffered: true });
    });
    await page.goto(pages.url(SITE, { key: hard.key, lang: "en", storage: "none" }), { waitUntil: "load" });
    await state(page, "challenge");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    await page.keyboard.down("Space");
    await page.waitForFunction(() => document.getElementById("widget")?.getAttribute("data-state") === "passed", {
      ...WAIT,
      timeout: 120_000,
    });
    await page.keyboard.up("Space");
    const seen = await page.evaluate(() => {
      const ready = Number(document.getElementById("widget")!.getAttribute("data-ready"));
      const calls = performance.getEntriesByType("resource").filter((e: { name: string }) => e.name.includes("/botcheck.php"));
      const granted = calls[calls.length - 1].startTime as number;
      const tasks = (window as unknown as { __tasks: { start: number; duration: number }[] }).__tasks;
      const during = tasks.filter((t) => t.start >= ready && t.start < granted);
      return { solveMs: granted - ready, count: during.length, longest: Math.max(0, ...during.map((t) => t.duration)) };
    });
    const { bits } = judged(grants[0]);
    expect(bits).toBeGreaterThanOrEqual(22);
    const hashes = Number(grants[0].proof) + 1;
    console.log(
      `botcheck.js solve in chromium: ${hashes.toLocaleString("en")} hashes in ${seen.solveMs.toFixed(0)} ms from challenge to grant ` +
        `(hold included; at least ${(hashes / seen.solveMs / 1000).toFixed(2)} M hashes/s); ` +
        `long tasks meanwhile: ${seen.count}, longest ${seen.longest.toFixed(0)} ms; machine load ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
    );
    await page.browserContext().close();
  }, 180_000);

  it("headless-looking browsers are refused as documented: HeadlessChrome UA → headless, webdriver → automation", async () => {
    const context = await browser.createBrowserContext();
    const headless = await context.newPage(); // chromium's own headless User-Agent and brands
    await open(headless, { lang: "en" });
    await state(headless, "refused");
    expect(await result(headless)).toEqual({ reason: "headless" });
    const driven = await context.newPage();
    await driven.setUserAgent({ userAgent: UA, userAgentMetadata: METADATA });
    await driven.evaluateOnNewDocument(() => Object.defineProperty(Navigator.prototype, "webdriver", { get: () => true }));
    await open(driven, { lang: "en" });
    await state(driven, "refused");
    expect(await result(driven)).toEqual({ reason: "automation" });
    await context.close();
  });

  it("follows blocked_url on a refusal", async () => {
    const blocked = await makeKey(gw, orgId, {
      domain: SITE,
      botcheck: { enabled: true, blocked_url: `http://${SITE}:${pages.port}/blocked` },
    });
    const page = await (await browser.createBrowserContext()).newPage();
    await page.goto(pages.url(SITE, { key: blocked.key }), { waitUntil: "load" });
    await page.waitForFunction(() => location.pathname === "/blocked", WAIT);
    await page.browserContext().close();
  });

  it("a key whose window a stranger filled is the key's capacity, not a verdict: the visitor passes degraded, never to blocked_url", async () => {
    const busy = await makeKey(gw, orgId, {
      domain: SITE,
      rate_per_minute: 1,
      botcheck: { enabled: true, blocked_url: `http://${SITE}:${pages.port}/blocked` },
    });
    // At the top of a minute of the service's clock, anyone holding the public key takes the window's one slot.
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    await gw.admin("POST", "/clock", { advance_s: 60 - (now % 60) });
    expect((await gw.call("/api/v1/verify.php", { method: "POST", body: { key: busy.key, domain: SITE } })).body.reason).toBe("ok");
    const page = await humanPage();
    await page.goto(pages.url(SITE, { key: busy.key }), { waitUntil: "load" });
    await state(page, "passed");
    expect(await result(page)).toMatchObject({ degraded: true, verified: false });
    expect(await page.evaluate(() => location.pathname)).not.toBe("/blocked");
    await page.browserContext().close();
  });

  it("a page of another origin is refused with domain_mismatch", async () => {
    const page = await humanPage("other.localhost");
    await open(page, { lang: "en" }, "other.localhost");
    await state(page, "refused");
    expect(await result(page)).toEqual({ reason: "domain_mismatch" });
    await page.browserContext().close();
  });

  it("speaks en, fr, de and es (screenshots in dist/screenshots)", async () => {
    mkdirSync(SHOTS, { recursive: true });
    const titles: Record<string, string> = {};
    for (const lang of ["en", "fr", "de", "es"]) {
      const page = await humanPage();
      await page.setViewport({ width: 520, height: 260 });
      await open(page, { lang, storage: "none" });
      await state(page, "challenge");
      await holdButton(page); // mid-hold: the ring is partly drawn
      await page.waitForFunction(
        () => document.getElementById("widget")!.shadowRoot!.querySelector("[role=status]")!.textContent !== "",
        WAIT,
      );
      const widget = await page.$("#widget");
      await widget!.screenshot({ path: join(SHOTS, `botcheck-${lang}.png`) });
      await page.mouse.up();
      titles[lang] = await page.evaluate(() => document.getElementById("widget")!.shadowRoot!.querySelector(".title")!.textContent ?? "");
      await page.browserContext().close();
    }
    expect(titles).toEqual({
      en: "Confirm you are human",
      fr: "Confirmez que vous êtes humain",
      de: "Bestätigen Sie, dass Sie ein Mensch sind",
      es: "Confirme que es humano",
    });
  });
});
