import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeUrl, type ProberDeps } from "../../../actors/prober/handler.js";
import { proberDeps, startProberWith } from "../../../actors/prober/index.js";
import { defaultScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { scanOptionsOf } from "../../../shared/platform/net/outbound/options.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { buildSnapshot } from "../../../shared/status/document.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { startTargets, type Targets } from "./targets.js";

// Generous against a loaded CI machine: a local answer must never look slow by accident.
const SLOW_MS = 1_000;
const TIMEOUT_MS = 4_000;

let gw: TestGateway;
let targets: Targets;
let deps: ProberDeps;
const probers: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  targets = await startTargets(SLOW_MS + 500);
  gw = await startTestGateway("prober", {
    PROBE_ALLOW_PRIVATE: "1",
    STATUS_SLOW_MS: String(SLOW_MS),
    STATUS_PROBE_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  deps = proberDeps(gw.ctx);
});

afterAll(async () => {
  for (const p of probers) await p.stop();
  await gw?.stop();
  await targets?.stop();
});

async function checkRows(): Promise<{ service: string; slot_at: Date; ok: boolean; status_code: number | null; error: string | null }[]> {
  const { rows } = await gw.ctx.db.query("SELECT service, slot_at, ok, status_code, error FROM probes ORDER BY slot_at, service");
  return rows;
}

async function components(): Promise<Record<string, string>> {
  const snapshot = await buildSnapshot(gw.ctx.db, {
    nowMs: gw.ctx.clock.now(),
    siteUrl: gw.url,
    pageName: "Test",
    probeIntervalS: 60,
    slowMs: SLOW_MS,
  });
  return Object.fromEntries(snapshot.document.components.map((c) => [c.key, c.status]));
}

async function advance(seconds: number, expectedRows: number): Promise<void> {
  const moved = await gw.admin("POST", "/clock", { advance_s: seconds });
  expect(moved.status).toBe(200);
  await waitFor(async () => (await checkRows()).length >= expectedRows, 10_000);
}

describe("status prober", () => {
  it("probes up, slow and down targets once per slot with two probers side by side, and derives each component's status", async () => {
    for (const [service, path] of [
      ["website", "/up"],
      ["api", "/slow"],
      ["dashboard", "/down"],
    ]) {
      const res = await gw.admin("PUT", `/status/services/${service}`, { name: service.toUpperCase(), url: `${targets.base}${path}` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    // Two probers in one process stand for two processes: same database, same Redis, same clock.
    // A long tick: only the start and clock moves trigger them, so the test decides the slots.
    probers.push(startProberWith(gw.ctx, deps, 600_000), startProberWith(gw.ctx, deps, 600_000));
    await waitFor(async () => (await checkRows()).length >= 3, 10_000);
    expect(await components()).toEqual({ website: "operational", api: "degraded", dashboard: "degraded" });
    // The slow rule is shown; from here on the API answers at once (keeps the test fast).
    await gw.admin("PUT", "/status/services/api", { name: "API", url: `${targets.base}/up?api` });

    await advance(60, 6);
    expect((await components()).dashboard).toBe("degraded");
    await advance(60, 9);
    const rows = await checkRows();
    expect(rows).toHaveLength(9);
    // One row per service per slot, and one request per slot: the lease kept the second prober off.
    expect(new Set(rows.map((r) => `${r.service}@${r.slot_at.getTime()}`)).size).toBe(9);
    expect(targets.hits("/up")).toBe(3 + 2);
    expect(targets.hits("/down")).toBe(3);
    expect(rows.filter((r) => r.service === "dashboard").every((r) => !r.ok && r.status_code === 503 && r.error === "status 503")).toBe(
      true,
    );
    expect(rows.filter((r) => r.service === "website").every((r) => r.ok && r.status_code === 200)).toBe(true);
    // Three failures in a row: outage.
    expect(await components()).toMatchObject({ website: "operational", dashboard: "outage" });

    // Recovery: up again, but recent failures keep it degraded until they leave the window.
    targets.recover();
    await advance(60, 12);
    expect((await components()).dashboard).toBe("degraded");
    // Eleven intervals later the failures are outside the recent window.
    await advance(11 * 60, 15);
    expect((await components()).dashboard).toBe("operational");
  }, 60_000);

  it("a service without URL is not_configured and is not probed", async () => {
    const res = await gw.admin("PUT", "/status/services/api", { name: "API", url: null });
    expect(res.status).toBe(200);
    expect(res.body.service).toMatchObject({ key: "api", name: "API", url: null, configured: false });
    expect((await components()).api).toBe("not_configured");
  });

  it("checks go through the SSRF guard unless PROBE_ALLOW_PRIVATE opens private space to them", async () => {
    const guarded = await probeUrl(
      `${targets.base}/up`,
      defaultScanOptions({ outbound: outboundPolicy("probe", "none"), timeoutMs: TIMEOUT_MS }),
    );
    expect(guarded.ok).toBe(false);
    expect(guarded.error).toMatch(/SSRF guard/);
    expect(deps.options.outbound).toMatchObject({ purpose: "probe", reach: "all" });
    const allowed = await probeUrl(`${targets.base}/redirect`, deps.options);
    expect(allowed).toMatchObject({ ok: true, statusCode: 200, error: null });
    // The prober's setting is the prober's: scans of the same gateway still stay out.
    expect(scanOptionsOf(gw.ctx.config).outbound).toMatchObject({ purpose: "scan", reach: "none" });
  });

  it("a target slower than the time-out is down", async () => {
    const late = await probeUrl(`${targets.base}/slow`, { ...deps.options, timeoutMs: SLOW_MS });
    expect(late).toMatchObject({ ok: false, statusCode: null, latencyMs: null });
    expect(late.error).toMatch(/no answer within/);
  });
});
