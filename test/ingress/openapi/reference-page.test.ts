import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/**
 * The API reference page (/docs/api) in headless Chromium: it renders under its own CSP
 * with no violation and no outside request. The screenshot stays in API_SHOTS_DIR (default
 * a temp dir) for a person to look at.
 */
// Functions passed to page.evaluate run in the browser; these names are theirs (as in test/embed).
declare const document: any, getComputedStyle: any;

const OUT = process.env.API_SHOTS_DIR ?? mkdtempSync(join(tmpdir(), "api-shots-"));

let gw: TestGateway;
let browser: Browser;
beforeAll(async () => {
  gw = await startTestGateway("openapi-page");
  browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

describe("the API reference page", () => {
  it("is served with a strict CSP and renders the endpoints and the reasons table without a violation", async () => {
    const answer = await gw.call("/docs/api");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; /);
    expect(String(answer.body)).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);

    const page = await browser.newPage();
    const violations: string[] = [];
    const requests: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy|Refused/.test(message.text())) violations.push(message.text());
    });
    page.on("request", (request) => requests.push(request.url()));
    await page.setViewport({ width: 1100, height: 1400 });
    await page.goto(`${gw.url}/docs/api`, { waitUntil: "load" });
    const facts = await page.evaluate(() => ({
      operations: document.querySelectorAll("h3 .m").length as number,
      reasons: document.querySelectorAll("#reasons + p + table tr").length as number,
      styled: getComputedStyle(document.querySelector(".m.post")).color as string,
    }));
    expect(violations).toEqual([]);
    expect(requests).toEqual([`${gw.url}/docs/api`]);
    expect(facts.operations).toBeGreaterThan(80);
    expect(facts.reasons).toBeGreaterThan(60);
    expect(facts.styled).toBe("rgb(26, 127, 55)"); // the inline style applied: its hash is in the CSP
    await page.screenshot({ path: join(OUT, "api-reference.png") });
    await page.evaluate(() => document.getElementById("admin")?.scrollIntoView());
    await page.screenshot({ path: join(OUT, "api-reference-admin.png") });
    await page.evaluate(() => document.getElementById("reasons")?.scrollIntoView());
    await page.screenshot({ path: join(OUT, "api-reference-reasons.png") });
    console.log(`API reference screenshots in ${OUT}`);
    await page.close();
  });
});
