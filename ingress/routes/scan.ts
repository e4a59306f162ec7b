import { randomUUID } from "node:crypto";
import {
  SCAN_STREAM,
  type ScanJob,
  scanReplySchema,
  acknowledgementsOf,
  findingsOf,
  latestGrades,
  latestScans,
  scanById,
  scanHistory,
  type ScanRow,
} from "../../shared/scans/index.js";
import { ask } from "../ask.js";
import type { IngressDeps } from "../deps.js";
import { readParams, str, type Params } from "../params.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import { passGate } from "./gate.js";
import { fault, ok, refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { hourlyBudget } from "./hourly-budget.js";
import { historyPoint, sectionView } from "./scan-view.js";
import { scanParams } from "./schemas.js";

/** interface.md section 8: fresh scans per organization per clock hour. */
export const SCANS_PER_HOUR = 10;
/** How long POST scan.php waits for the scanner before answering 504 `timeout`. */
export const SCAN_TIMEOUT_MS = 25_000;

/**
 * The organization's fresh-scan budget, a fixed window per clock hour. `take` spends a
 * slot (POST); otherwise it only reads (every other scan response carries the headers too).
 */
const budget = (deps: IngressDeps, orgId: number, take: boolean) =>
  hourlyBudget(deps, (hour) => deps.keys.scanBudget(orgId, hour), SCANS_PER_HOUR, take);

export async function scanHeaders(deps: IngressDeps, orgId: number): Promise<Record<string, string>> {
  return (await budget(deps, orgId, false)).headers;
}

/**
 * The headers when the organization is unknown (no key, an unknown key, a malformed
 * request) or Redis cannot be read (a fault): the plan's limit, nothing known to be spent,
 * and the end of the current clock hour (docs/security.md, item 11b).
 */
export function unknownBudgetHeaders(nowS: number): Record<string, string> {
  const hour = Math.floor(nowS / 3600);
  return {
    "x-ratelimit-limit": String(SCANS_PER_HOUR),
    "x-ratelimit-remaining": String(SCANS_PER_HOUR),
    "x-ratelimit-reset": String((hour + 1) * 3600),
  };
}

async function headersOf(deps: IngressDeps, orgId: number | null): Promise<Record<string, string>> {
  if (orgId === null) return unknownBudgetHeaders(deps.clock.nowSeconds());
  return scanHeaders(deps, orgId).catch(() => unknownBudgetHeaders(deps.clock.nowSeconds()));
}

async function storedAnswer(
  deps: IngressDeps,
  orgId: number,
  domain: string,
  fresh: boolean,
  headers: Record<string, string>,
  ids?: { web: number; dns: number },
): Promise<HttpReply> {
  const latest: { web: ScanRow | null; dns: ScanRow | null } = ids
    ? { web: await scanById(deps.db, ids.web), dns: await scanById(deps.db, ids.dns) }
    : await latestScans(deps.db, orgId, domain);
  if (!latest.web || !latest.dns) return refuse("no_scan", {}, headers);
  const [web, dns, acks] = await Promise.all([
    findingsOf(deps.db, latest.web.id),
    findingsOf(deps.db, latest.dns.id),
    acknowledgementsOf(deps.db, orgId, domain),
  ]);
  const now = deps.clock.now();
  return ok(
    {
      fresh,
      domain,
      web: sectionView(latest.web, web, acks, now),
      dns: sectionView(latest.dns, dns, acks, now),
      ts: deps.clock.nowSeconds(),
    },
    200,
    headers,
  );
}

/** What scan.php does once the key passed the chain for `domain` (verified, server key). */
export async function answerScan(
  deps: IngressDeps,
  method: string,
  params: Params,
  gate: { orgId: number; domain: string; verifiedDomains: readonly string[] },
  timeoutMs: number,
): Promise<HttpReply> {
  const { orgId, domain } = gate;
  if (method !== "POST" || params.list !== undefined || params.history !== undefined) {
    const headers = await scanHeaders(deps, orgId);
    if (params.list === "1" || params.list === 1) {
      const grades = await latestGrades(deps.readDb, orgId, [...gate.verifiedDomains]);
      const domains = gate.verifiedDomains.map((name) => {
        const entry = grades.get(name) ?? {};
        return { domain: name, web: entry.web?.grade ?? null, dns: entry.dns?.grade ?? null, active: entry.active?.grade ?? null };
      });
      return ok({ domains, ts: deps.clock.nowSeconds() }, 200, headers);
    }
    if (params.history === "1" || params.history === 1) {
      const rows = await scanHistory(deps.readDb, orgId, domain);
      const history = {
        web: rows.filter((r) => r.kind === "web").map(historyPoint),
        dns: rows.filter((r) => r.kind === "dns").map(historyPoint),
        active: rows.filter((r) => r.kind === "active").map(historyPoint),
      };
      return ok({ domain, history, ts: deps.clock.nowSeconds() }, 200, headers);
    }
    return storedAnswer(deps, orgId, domain, false, headers);
  }

  const spent = await budget(deps, orgId, true);
  if (!spent.allowed) return refuse("scan_rate_limited", {}, spent.headers);
  const job: ScanJob = { job_id: randomUUID(), org_id: orgId, domain, trigger: "api" };
  const answer = await ask(deps, {
    stream: SCAN_STREAM,
    message: job,
    replySchema: scanReplySchema,
    timeoutMs,
    refusal: { headers: spent.headers },
  });
  if (!answer.ok) return answer.refusal;
  const reply = answer.reply;
  if (!reply.ok) return refuse("scan_failed", {}, spent.headers);
  return storedAnswer(deps, orgId, domain, true, spent.headers, reply.scans);
}

/**
 * scan.php (interface.md 4.5): server keys only; the key's lock must match `domain`,
 * and `domain` must be verified by the key's organization (domain_not_verified).
 * Every answer carries the X-RateLimit headers: the organization's once the key is known
 * to be one of its server keys, the unknown-budget ones before.
 */
export function scanRoute(timeoutMs = SCAN_TIMEOUT_MS) {
  return (request: HttpRequest, deps: IngressDeps) => scan(request, deps, timeoutMs);
}

function scan(request: HttpRequest, deps: IngressDeps, timeoutMs: number): Promise<HttpReply> {
  // Every answer carries the X-RateLimit headers (interface.md 8), faults included: the
  // route wrapper (app.ts) answers a fault 500 `internal_error` with these.
  let orgId: number | null = null;
  request.fault = { reason: "internal_error", headers: () => headersOf(deps, orgId) };
  return judgeScan(request, deps, timeoutMs, (id) => (orgId = id));
}

async function judgeScan(request: HttpRequest, deps: IngressDeps, timeoutMs: number, known: (orgId: number) => void): Promise<HttpReply> {
  const params = readParams(request);
  if (params === null || !scanParams(params)) return refuse("bad_request", {}, await headersOf(deps, null));
  const raw = str(params, "domain");
  const gate = await passGate(request, deps, params, { endpoint: "scan", serverOnly: true });
  if (!gate.ok) {
    // The budget is the organization's server keys' business: a client key (refused
    // server_key_required, or any refusal judged before its kind) learns nothing of it.
    const orgId = gate.prepared?.key.kind === "server" ? gate.prepared.org.id : null;
    if (orgId !== null) known(orgId);
    const headers = await headersOf(deps, orgId);
    return gate.fault ? fault(request.requestId, false, { headers }) : refuse(gate.reason, {}, headers);
  }
  const orgId = gate.prepared.org.id;
  known(orgId);
  const domain = raw ? normalizeDomain(raw) : null;
  if (!domain) return refuse("missing_domain", {}, await scanHeaders(deps, orgId));
  const verified = gate.prepared.org.verified_domains;
  if (!verified.includes(domain)) return refuse("domain_not_verified", {}, await scanHeaders(deps, orgId));
  // A fault from here on (timeout, scan_failed, a thrown one) is given back by the route wrapper (app.ts).
  return answerScan(deps, request.method, params, { orgId, domain, verifiedDomains: verified }, timeoutMs);
}
