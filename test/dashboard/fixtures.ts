import { expect } from "vitest";
import { startActor, type RunningActor } from "../../actors/index.js";
import { defineActor } from "../../actors/runtime/index.js";
import { scanHandler, type ScanSections } from "../../actors/scanner/job/handler.js";
import type { RunRecheck } from "../../actors/scanner/job/recheck.js";
import { defaultScanOptions } from "../../shared/platform/net/outbound/options.js";
import { usageActor } from "../../actors/usage/index.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import type { StoredFinding } from "../../shared/scans/db/scans.js";
import { insertCheck } from "../../shared/status/db/status.js";
import { SCAN_STREAM, scanJobSchema, type ScanJob } from "../../shared/scans/stream.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { buildSigninScript } from "../../ops/embed/build.js";
import { buildDashboard } from "../../ops/embed/dashboard-build.js";
import { EMBED_DIR } from "../../shared/embed/asset.js";
import { DASHBOARD_DIR } from "../../shared/embed/dashboard-asset.js";
import { startHarness, type Harness } from "./harness.js";

/**
 * An organization with something on every page: verified and pending domains, client and
 * server keys, calls (allowed and refused) with named installations, content, a secret, a
 * SIEM destination, a webhook, status services, an incident and a maintenance window.
 * Everything is made through the real admin and public APIs; `names` lets the hostile-value
 * test put its payloads where outside text is shown.
 */

export interface Names {
  org: string;
  clientKey: string;
  install: string;
  content: string;
  incident: string;
  member: string;
  /** What a scanned site put in its headers: shown as a finding's evidence. */
  evidence: string;
  /** Why the API's probe failed, as the prober wrote it. */
  probeError: string;
}

export const PLAIN: Names = {
  org: "Northwind Trading",
  clientKey: "Shop front",
  install: "shop-eu-2",
  content: "Welcome back! Free shipping over 50 €.",
  incident: "Elevated verify latency in eu-west",
  member: "Ada Lovelace",
  evidence: "strict-transport-security: max-age=300",
  probeError: "refused address 10.0.0.5 (private): the SSRF guard allows public addresses only",
};

export interface Made {
  orgId: number;
  clientKeyId: number;
  /** The client key itself (public: any visitor of the shop reads it from the page). */
  clientKey: string;
  serverKey: string;
  serverKeyId: number;
  domain: string;
}

async function ok(answer: Promise<{ status: number; body: any }>, status = [200, 201]): Promise<any> {
  const got = await answer;
  expect(status, JSON.stringify(got.body)).toContain(got.status);
  return got.body;
}

/**
 * The real scan job handler (storage, history, events, re-checks) over a scan the test
 * writes: statuses by finding, and the evidence a hostile site could have served.
 */
export interface FakeScans {
  statuses: Record<string, string>;
  stop(): Promise<void>;
}

const SECTION: Record<string, "dns" | "web"> = { "email:spf": "dns", "email:dmarc": "dns", "tls:hsts": "web", "headers:csp": "web" };
const LABELS: Record<string, string> = {
  "email:spf": "SPF record",
  "email:dmarc": "DMARC policy",
  "tls:hsts": "Strict-Transport-Security",
  "headers:csp": "Content-Security-Policy",
};

export async function startScans(gw: TestGateway, evidence: string): Promise<FakeScans> {
  const statuses: Record<string, string> = { "email:spf": "fail", "email:dmarc": "warn", "tls:hsts": "fail", "headers:csp": "pass" };
  const finding = (id: string, status: string): StoredFinding => ({
    id,
    group: id.split(":")[0],
    label: LABELS[id],
    status,
    summary: `${LABELS[id]}: ${status === "pass" ? "as it should be" : "needs attention"}`,
    detail: status === "pass" ? "" : `Publish a stricter ${LABELS[id]}.`,
    evidence: id === "tls:hsts" ? evidence : "",
    result: `${id}-${status}`,
  });
  const section = (all: StoredFinding[]) => ({
    grade: all.some((f) => f.status === "fail") ? "D" : all.some((f) => f.status === "warn") ? "B" : "A",
    score: 100 - 30 * all.filter((f) => f.status === "fail").length - 10 * all.filter((f) => f.status === "warn").length,
    fail_count: all.filter((f) => f.status === "fail").length,
    warn_count: all.filter((f) => f.status === "warn").length,
    findings: all,
  });
  const runScan = async (): Promise<ScanSections> => {
    const all = Object.entries(statuses).map(([id, status]) => finding(id, status));
    return {
      algorithm: "test-1",
      dns: section(all.filter((f) => SECTION[f.id] === "dns")),
      web: section(all.filter((f) => SECTION[f.id] === "web")),
    };
  };
  const runRecheck: RunRecheck = async (_domain, key) => (statuses[key] ? finding(key, statuses[key]) : null);
  const handler = scanHandler(runScan, defaultScanOptions(), runRecheck);
  const actor = defineActor<ScanJob, Pool>({
    name: "scanner",
    streams: SCAN_STREAM,
    schema: scanJobSchema,
    concurrency: 2,
    maxAttempts: 2,
    backoffBaseMs: 50,
    blockMs: 200,
    handler: (job, helpers) => handler(job, helpers),
  });
  const running = await startActor(gw.ctx, actor);
  return { statuses, stop: () => running.stop() };
}

/** Two scans a day apart (a history to plot), and one failing finding owned, due, and noted. */
export async function scanAndAssign(gw: TestGateway, scans: FakeScans, serverKey: string, domain: string): Promise<void> {
  const scan = () => ok(gw.call("/api/v1/scan.php", { method: "POST", body: { key: serverKey, domain } }));
  scans.statuses["headers:csp"] = "fail";
  await scan();
  await ok(gw.admin("POST", "/clock", { advance_s: 86_400 }));
  scans.statuses["headers:csp"] = "pass";
  await scan();
  const due = new Date(gw.ctx.clock.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  await ok(
    gw.call("/api/v1/assignments.php", {
      method: "POST",
      body: { key: serverKey, for_domain: domain, finding_key: "tls:hsts", owner: "ada@example.com", status: "in_progress", due },
    }),
  );
  await ok(
    gw.call("/api/v1/assignments.php", {
      method: "POST",
      body: { key: serverKey, for_domain: domain, finding_key: "email:spf", owner: "grace@example.com" },
    }),
  );
}

export async function makeWorld(gw: TestGateway, names: Names = PLAIN): Promise<Made> {
  const org = await ok(gw.admin("POST", "/orgs", { name: names.org, plan: "professional" }));
  const orgId = org.org.id as number;
  const domain = "shop.example.com";
  await ok(gw.admin("POST", `/orgs/${orgId}/domains`, { domain, verified: true }));
  await ok(gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "blog.example.net" }));
  const client = await ok(
    gw.admin("POST", `/orgs/${orgId}/keys`, {
      name: names.clientKey,
      kind: "client",
      domain,
      scopes: ["read"],
      ip_deny: ["198.51.100.0/24"],
      countries_block: ["KP"],
    }),
  );
  const server = await ok(gw.admin("POST", `/orgs/${orgId}/keys`, { name: "Back office", kind: "server" }));

  // Five days of calls (the test clock moves a day at a time): allowed ones under two
  // endpoint labels, refusals (domain_mismatch, insufficient_scope, a suspended key), and on
  // the last day a second and third installation left pending.
  const usage: RunningActor = await startActor(gw.ctx, usageActor);
  let calls = 0;
  try {
    const verify = (body: Record<string, unknown>) => {
      calls += 1;
      return gw.call("/api/v1/verify.php", { method: "POST", body: { key: client.key, ...body } });
    };
    for (let day = 0; day < 5; day++) {
      for (let i = 0; i < 3 + 2 * day; i++) await verify({ domain, endpoint: i % 3 ? "checkout" : "login" });
      for (let i = 0; i < day % 3; i++) await verify({ domain: "elsewhere.example.org" });
      if (day % 2 === 1) await verify({ domain, scope: "write" });
      if (day === 2) {
        await ok(gw.admin("POST", `/keys/${client.details.id}/suspend`));
        await verify({ domain });
        await verify({ domain });
        await ok(gw.admin("POST", `/keys/${client.details.id}/resume`));
      }
      if (day < 4) await ok(gw.admin("POST", "/clock", { advance_s: 86_400 }));
    }
    await verify({ domain, install: names.install });
    await verify({ domain, install: "shop-us-1" });
    await waitFor(async () => {
      const { rows } = await gw.ctx.db.query<{ n: string }>("SELECT count(*) AS n FROM installations WHERE key_id = $1", [
        client.details.id,
      ]);
      return Number(rows[0].n) >= 3;
    });
    await waitFor(async () => {
      const { rows } = await gw.ctx.db.query<{ n: string }>("SELECT coalesce(sum(calls), 0) AS n FROM usage_daily WHERE key_id = $1", [
        client.details.id,
      ]);
      return Number(rows[0].n) >= calls;
    });
  } finally {
    await usage.stop();
  }

  await ok(gw.admin("PUT", `/orgs/${orgId}/content/banner`, { type: "text", value: names.content }));
  await ok(gw.admin("PUT", `/orgs/${orgId}/content/pricing`, { type: "json", value: { plans: ["basic", "pro"], trial_days: 14 } }));
  await ok(gw.admin("PUT", `/orgs/${orgId}/secrets/STRIPE_KEY`, { value: "sk_stripe_not_shown" }));
  await ok(
    gw.admin("POST", `/orgs/${orgId}/siem`, {
      kind: "splunk_hec",
      url: "https://siem.example.com:8088/services/collector",
      token: "hec-token",
    }),
  );
  await ok(gw.admin("POST", `/orgs/${orgId}/webhooks`, { url: "https://hooks.example.com/gateway", secret: "whsec_0123456789abcdef" }));
  await ok(gw.admin("PUT", "/status/services/api", { name: "API", url: "https://api.example.com/healthz" }));
  await ok(gw.admin("PUT", "/status/services/website", { name: "Website", url: "https://www.example.com/" }));
  const incident = await ok(
    gw.admin("POST", "/status/incidents", {
      title: names.incident,
      impact: "minor",
      affects: ["api"],
      status: "investigating",
      body: `We are looking into it: ${names.incident}`,
    }),
  );
  await ok(
    gw.admin("POST", `/status/incidents/${incident.incident.id}/updates`, {
      status: "identified",
      body: "A slow database replica; traffic moved away.",
    }),
  );
  // What the prober would have written: one service up, one refused by the SSRF guard.
  const at = gw.ctx.clock.now() - 60_000;
  await insertCheck(gw.ctx.db, { service: "website", slotMs: at, atMs: at, ok: true, latencyMs: 84, statusCode: 200, error: null });
  await insertCheck(gw.ctx.db, {
    service: "api",
    slotMs: at,
    atMs: at,
    ok: false,
    latencyMs: null,
    statusCode: null,
    error: names.probeError,
  });
  const starts = new Date(gw.ctx.clock.now() + 2 * 86_400_000).toISOString();
  const ends = new Date(gw.ctx.clock.now() + 2 * 86_400_000 + 3_600_000).toISOString();
  await ok(
    gw.admin("POST", "/status/maintenance", {
      title: "Database upgrade",
      body: "PostgreSQL 17.",
      affects: ["api"],
      starts_at: starts,
      ends_at: ends,
    }),
  );
  // The members last: the calls above moved the test clock four days, and an invitation
  // opened by a test (day.test.ts: the owner registers her passkey) must still be valid.
  await ok(gw.admin("POST", `/orgs/${orgId}/members`, { name: names.member, email: "ada@example.com", role: "owner" }));
  await ok(gw.admin("POST", `/orgs/${orgId}/members`, { name: "Grace Hopper", email: "grace@example.com", role: "member" }));
  return { orgId, clientKeyId: client.details.id, clientKey: client.key, serverKey: server.key, serverKeyId: server.details.id, domain };
}

/** What the dashboard walks share: a gateway with its SMTP sink, the organization, its scans and a browser. */
export interface DashboardWorld {
  gw: TestGateway;
  smtp: SmtpSink;
  world: Made;
  scans: FakeScans;
  harness: Harness;
  stop(): Promise<void>;
}

/**
 * Builds the sign-in script and the dashboard, starts a gateway on SITE_URL
 * http://localhost:PORT (passkeys need a host name) with an SMTP sink for invitations, makes
 * the organization (`names` where outside text is shown), runs and assigns a scan whose
 * evidence is `evidence`, and opens a browser.
 */
export async function openDashboardWorld(
  label: string,
  names: Names = PLAIN,
  evidence = "strict-transport-security: max-age=300",
): Promise<DashboardWorld> {
  await buildSigninScript(EMBED_DIR);
  await buildDashboard(DASHBOARD_DIR);
  const smtp = await startSmtpSink();
  const gw = await startTestGateway(`dashboard-${label}`, { SITE_URL: "http://localhost:0", SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  const world = await makeWorld(gw, names);
  const scans = await startScans(gw, evidence);
  await scanAndAssign(gw, scans, world.serverKey, world.domain);
  const harness = await startHarness(gw, label);
  return {
    gw,
    smtp,
    world,
    scans,
    harness,
    async stop() {
      await harness.close();
      await scans.stop();
      await gw.stop();
      await smtp.stop();
    },
  };
}

/** Every page of the dashboard, by the name its screenshots take: what the walks visit (walk.test.ts, dark.test.ts). */
export function dashboardPages(world: Made): { name: string; path: string }[] {
  const org = `/dashboard/orgs/${world.orgId}`;
  const key = `${org}/keys/${world.clientKeyId}`;
  return [
    { name: "operator", path: "/dashboard/operator" },
    { name: "operator-status", path: "/dashboard/operator?tab=status" },
    { name: "operator-incidents", path: "/dashboard/operator?tab=incidents" },
    { name: "operator-maintenance", path: "/dashboard/operator?tab=maintenance" },
    { name: "overview", path: org },
    { name: "keys", path: `${org}/keys` },
    { name: "key-settings", path: key },
    { name: "key-installations", path: `${key}?tab=installations` },
    { name: "key-usage", path: `${key}?tab=usage` },
    { name: "key-usage-reasons", path: `${key}?tab=usage&by=reason` },
    { name: "key-integration", path: `${key}?tab=integrate` },
    { name: "domains", path: `${org}/domains` },
    { name: "scans", path: `${org}/scans` },
    { name: "scan", path: `${org}/scans/${world.domain}` },
    { name: "findings", path: `${org}/findings` },
    { name: "finding", path: `${org}/findings/${world.domain}/tls:hsts` },
    { name: "content", path: `${org}/content` },
    { name: "siem", path: `${org}/siem` },
    { name: "team", path: `${org}/team` },
    { name: "activity", path: `${org}/activity` },
  ];
}
