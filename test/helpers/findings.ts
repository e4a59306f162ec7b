import { expect } from "vitest";
import { startActor, type RunningActor } from "../../actors/index.js";
import { defineActor } from "../../actors/runtime/index.js";
import { scanHandler, type ScanSections } from "../../actors/scanner/job/handler.js";
import { SCAN_STREAM, type ScanJob } from "../../shared/scans/stream.js";
import type { RunRecheck } from "../../actors/scanner/job/recheck.js";
import { defaultScanOptions } from "../../shared/platform/net/outbound/options.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import type { StoredFinding } from "../../shared/scans/db/scans.js";
import type { TestGateway } from "./gateway.js";

/**
 * A scanner actor whose scan is a table the test sets: the real job handler (storage,
 * events, regression, reopen, re-check storage) over fake retrieval, so workflow tests
 * need no DNS or web fixtures.
 */
export interface FakeScanner {
  /** Finding statuses by domain and finding key; a test changes them between scans. */
  statuses: Map<string, Record<string, string>>;
  jobs: ScanJob[];
  stop(): Promise<void>;
}

export const FINDING_LABELS: Record<string, string> = {
  "email:spf": "SPF record",
  "email:dmarc": "DMARC policy",
  "headers:hsts": "Strict-Transport-Security",
  "headers:csp": "Content-Security-Policy",
};

const SECTION: Record<string, "dns" | "web"> = { "email:spf": "dns", "email:dmarc": "dns", "headers:hsts": "web", "headers:csp": "web" };

function finding(id: string, status: string): StoredFinding {
  return {
    id,
    group: id.split(":")[0],
    label: FINDING_LABELS[id],
    status,
    summary: `${id} is ${status}`,
    detail: "",
    evidence: "",
    result: `${id.split(":")[1]}-${status}`,
  };
}

function section(findings: StoredFinding[]) {
  return {
    grade: findings.some((f) => f.status === "fail") ? "D" : "A",
    score: 100 - 20 * findings.filter((f) => f.status === "fail").length,
    fail_count: findings.filter((f) => f.status === "fail").length,
    warn_count: findings.filter((f) => f.status === "warn").length,
    findings,
  };
}

export const DEFAULT_STATUSES: Record<string, string> = {
  "email:spf": "fail",
  "email:dmarc": "warn",
  "headers:hsts": "fail",
  "headers:csp": "pass",
};

export async function startFakeScanner(gw: TestGateway): Promise<FakeScanner> {
  const statuses = new Map<string, Record<string, string>>();
  const jobs: ScanJob[] = [];
  const of = (domain: string): Record<string, string> => statuses.get(domain) ?? DEFAULT_STATUSES;
  const runScan = async (domain: string): Promise<ScanSections> => {
    const all = Object.entries(of(domain)).map(([id, status]) => finding(id, status));
    return {
      algorithm: "test-1",
      dns: section(all.filter((f) => SECTION[f.id] === "dns")),
      web: section(all.filter((f) => SECTION[f.id] === "web")),
    };
  };
  const runRecheck: RunRecheck = async (domain, key) => (of(domain)[key] ? finding(key, of(domain)[key]) : null);
  const handler = scanHandler(runScan, defaultScanOptions(), runRecheck);
  const actor = defineActor<ScanJob, Pool>({
    name: "scanner",
    streams: SCAN_STREAM,
    schema: (await import("../../shared/scans/stream.js")).scanJobSchema,
    concurrency: 4,
    maxAttempts: 2,
    backoffBaseMs: 50,
    blockMs: 200,
    handler: async (job, helpers) => {
      jobs.push(job);
      await handler(job, helpers);
    },
  });
  const running: RunningActor = await startActor(gw.ctx, actor);
  return { statuses, jobs, stop: () => running.stop() };
}

export async function addMember(gw: TestGateway, orgId: number, name: string, email: string): Promise<void> {
  const res = await gw.admin("POST", `/orgs/${orgId}/members`, { name, email });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** Runs a fresh scan through scan.php (the fake scanner answers). */
export async function scanNow(gw: TestGateway, key: string, domain: string): Promise<void> {
  const res = await gw.call("/api/v1/scan.php", { method: "POST", body: { key, domain } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

export function assignments(gw: TestGateway, method: "GET" | "POST", params: Record<string, string>, form = false) {
  if (method === "GET") return gw.call("/api/v1/assignments.php", { method, query: params });
  return gw.call("/api/v1/assignments.php", form ? { method, form: params } : { method, body: params });
}

export async function eventsOf(
  gw: TestGateway,
  orgId: number,
  type?: string,
): Promise<{ id: number; type: string; domain: string; payload: Record<string, unknown> }[]> {
  const { rows } = await gw.ctx.db.query(
    "SELECT id, type, domain, payload FROM events WHERE org_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY id",
    [orgId, type ?? null],
  );
  return rows;
}
