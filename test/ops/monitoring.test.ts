import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startActor, type RunningActor } from "../../actors/index.js";
import { usageActor } from "../../actors/usage/index.js";
import { freePort } from "../faults/services.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";

/**
 * The alert rules and the dashboard name only series the gateway really exports: promtool
 * checks the rules, and a real Prometheus (Debian's `prometheus`) scrapes a running gateway
 * with an actor, then every metric name the rules and panels use must be among the names it
 * collected.
 */

const run = promisify(execFile);
let gw: TestGateway;
let actor: RunningActor;
let prometheus: ChildProcess | null = null;
let dir = "";

beforeAll(async () => {
  gw = await startTestGateway("monitoring");
  actor = await startActor(gw.ctx, usageActor);
  dir = await mkdtemp(join(tmpdir(), "prometheus-"));
});
afterAll(async () => {
  prometheus?.kill("SIGKILL");
  await actor?.stop();
  await gw?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function namesUsed(): Promise<string[]> {
  const text = (await readFile("ops/monitoring/alerts.yml", "utf8")) + (await readFile("ops/monitoring/dashboard.json", "utf8"));
  const names = new Set<string>();
  for (const match of text.matchAll(/\b((?:gateway|process|nodejs)_[a-z0-9_]+)\b/g)) names.add(match[1]);
  return [...names].sort();
}

describe("monitoring", () => {
  it("promtool accepts the alert rules", async () => {
    const { stdout } = await run("promtool", ["check", "rules", "ops/monitoring/alerts.yml"]);
    expect(stdout).toContain("SUCCESS");
  });

  it("a real Prometheus scraping the gateway collects every series the rules and the dashboard use", async () => {
    // Traffic, so the request counters and histograms have samples.
    await gw.call("/api/v1/verify.php", { body: { key: "ak_live_nothing" } });
    const port = await freePort();
    const target = new URL(gw.metricsUrl).host;
    await writeFile(
      join(dir, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gateway\n    static_configs:\n      - targets: ["${target}"]\n`,
    );
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
    const api = `http://127.0.0.1:${port}/api/v1`;
    const used = await namesUsed();
    expect(used.length).toBeGreaterThan(10);
    let missing: string[] = used;
    await waitFor(
      async () => {
        const response = await fetch(`${api}/label/__name__/values`).catch(() => null);
        if (!response?.ok) return false;
        const collected = new Set(((await response.json()) as { data: string[] }).data);
        const has = (name: string) => collected.has(name) || collected.has(`${name}_bucket`);
        missing = used.filter((name) => !has(name));
        return missing.length === 0;
      },
      30_000,
      500,
    ).catch(() => undefined);
    expect(missing).toEqual([]);
    const up = (await (await fetch(`${api}/query?query=up`)).json()) as { data: { result: { value: [number, string] }[] } };
    expect(up.data.result[0]?.value[1]).toBe("1");
  }, 60_000);
});
