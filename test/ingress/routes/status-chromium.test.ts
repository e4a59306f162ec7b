import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCheck, SERVICE_KEYS } from "../../../shared/status/db/status.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/**
 * Headless Chromium (Debian's `chromium`, installed by .ci/run) renders the human page at
 * desktop and phone width and prints the quarterly report to PDF. The files stay in
 * STATUS_SHOTS_DIR (default a temp dir) so a person can look at them.
 */
const run = promisify(execFile);
const OUT = process.env.STATUS_SHOTS_DIR ?? mkdtempSync(join(tmpdir(), "status-shots-"));
const DAY_MS = 86_400_000;

let gw: TestGateway;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  gw = await startTestGateway("statuschrome");
  const now = gw.ctx.clock.now();
  await gw.admin("PUT", "/status/services/website", { name: "Website", url: "https://www.example.com/" });
  await gw.admin("PUT", "/status/services/api", { name: "Public API", url: "https://api.example.com/healthz" });
  // 90 days of checks, every two hours: a bad day for the API, a few lost checks for the website.
  for (const [s, service] of SERVICE_KEYS.slice(0, 2).entries()) {
    for (let day = 89; day >= 0; day--) {
      for (let hour = 0; hour < 24; hour += 2) {
        const at = now - day * DAY_MS - hour * 3_600_000;
        const ok = !(service === "api" && day === 12 && hour < 8) && !(service === "website" && day % 17 === 3 && hour === 0);
        await insertCheck(gw.ctx.db, {
          service,
          slotMs: at,
          atMs: at,
          ok,
          latencyMs: 80 + s * 40 + (hour % 5) * 7,
          statusCode: ok ? 200 : 503,
          error: ok ? null : "status 503",
        });
      }
    }
  }
  const incident = await gw.admin("POST", "/status/incidents", {
    title: "Elevated API error rate",
    impact: "minor",
    affects: ["api"],
    body: "We are looking into errors on verify.php.",
  });
  await gw.admin("POST", `/status/incidents/${incident.body.incident.id}/updates`, {
    status: "identified",
    body: "A bad node was taken out of rotation.",
  });
  const old = await gw.admin("POST", "/status/incidents", {
    title: "Dashboard login failures",
    impact: "major",
    affects: ["dashboard"],
    body: "Logins fail.",
  });
  await gw.admin("POST", `/status/incidents/${old.body.incident.id}/updates`, { status: "resolved", body: "Fixed by a rollback." });
  await gw.admin("PATCH", `/status/incidents/${old.body.incident.id}`, {
    postmortem: "A session-store configuration change was rolled out without its migration.",
  });
  await gw.admin("POST", "/status/maintenance", {
    title: "Database upgrade",
    body: "PostgreSQL minor upgrade; a few seconds of read-only mode.",
    affects: [],
    starts_at: new Date(now + 2 * DAY_MS).toISOString(),
    ends_at: new Date(now + 2 * DAY_MS + 3_600_000).toISOString(),
  });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

async function chromium(args: string[]): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), "chromium-profile-"));
  const { stderr } = await run(
    "chromium",
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--no-first-run",
      "--enable-logging=stderr",
      "--v=0",
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { timeout: 90_000 },
  );
  return stderr;
}

function consoleErrors(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /CONSOLE|Uncaught|Failed to load resource/i.test(line));
}

describe("status page in a browser", () => {
  it.each([
    ["desktop", "1280,1800"],
    ["phone", "390,2400"],
  ])(
    "renders the page at %s width without console errors",
    async (name, size) => {
      const file = join(OUT, `status-${name}.png`);
      const stderr = await chromium([`--screenshot=${file}`, `--window-size=${size}`, `${gw.url}/status`]);
      expect(consoleErrors(stderr)).toEqual([]);
      expect(readFileSync(file).subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    },
    120_000,
  );

  it("prints the quarterly report to PDF", async () => {
    const file = join(OUT, "status-report.pdf");
    const stderr = await chromium(["--no-pdf-header-footer", `--print-to-pdf=${file}`, `${gw.url}/status/report`]);
    expect(consoleErrors(stderr)).toEqual([]);
    const pdf = readFileSync(file);
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    // A4 pages: 595 x 842 points.
    const box = /MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/.exec(pdf.toString("latin1"));
    expect(Math.round(Number(box?.[1]))).toBe(595);
    expect(Math.round(Number(box?.[2]))).toBe(842);
    await chromium([`--screenshot=${join(OUT, "status-report.png")}`, "--window-size=1000,1400", `${gw.url}/status/report`]);
  }, 120_000);
});
