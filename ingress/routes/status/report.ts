import { randomBytes } from "node:crypto";
import { currentQuarter, parseQuarter, reportData, renderReport } from "../../../shared/status/index.js";
import type { IngressDeps } from "../../deps.js";
import { refuseField } from "../../reply.js";
import type { HttpReply, HttpRequest } from "../../types.js";
import { CACHE_CONTROL, HTML_HEADERS } from "./reply.js";

/**
 * The quarterly report, built at most once per quarter and cache period for the whole
 * deployment: it costs five queries, two of them percentiles over a quarter of checks,
 * and anyone may ask for any of about a hundred quarters. Readers of one quarter in one
 * process share one promise (Redis read and, on a miss, the build); across processes a
 * short Redis lock (SET NX) lets one build while the others wait for its copy, as the
 * status document's cache does (shared/status/cache.ts). Reads go to the read pool.
 */

type Quarter = NonNullable<ReturnType<typeof parseQuarter>>;

/** The current quarter's report is kept a minute: its checks still arrive. */
const CURRENT_TTL_S = 60;
/**
 * A finished quarter's checks no longer change (a slot nobody probed is never filled in
 * later, and the prober's backfill writes roll-ups, which the report does not read), but
 * an operator may still edit its incidents (a postmortem written after the quarter) or
 * rename a service, and checks are deleted after 400 days: an hour bounds how late those show.
 */
const FINISHED_TTL_S = 3_600;
/** A check started before the quarter ended may land a little after: until then the quarter counts as current. */
const SETTLE_MS = 15 * 60_000;
const LOCK_MS = 15_000;
const WAIT_STEP_MS = 25;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The builds under way in this process, by Redis key (the deployment's prefix included):
 * an entry lives only while its promise runs, so it holds at most one per quarter asked at once.
 */
const pending = new Map<string, Promise<string>>();

/** `GET {site_url}/status/report?quarter=2026-Q4` (default: the current quarter), HTML for print. */
export async function statusReport(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const raw = new URLSearchParams(request.query).get("quarter");
  const now = deps.clock.now();
  const quarter = raw === null || raw === "" ? currentQuarter(now) : parseQuarter(raw, now);
  if (quarter === null) {
    return {
      ...refuseField("bad_quarter", "quarter must be YYYY-Qn (n 1 to 4), from 2000 up to the current quarter"),
      headers: { "cache-control": "no-store" },
    };
  }
  const html = await reportHtml(deps, quarter, now);
  return {
    status: 200,
    headers: { ...HTML_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": CACHE_CONTROL },
    body: html,
  };
}

/** Seconds a rendered report is kept in Redis. */
export function reportTtlSeconds(quarter: Quarter, nowMs: number): number {
  return nowMs >= quarter.toMs + SETTLE_MS ? FINISHED_TTL_S : CURRENT_TTL_S;
}

function reportHtml(deps: IngressDeps, quarter: Quarter, nowMs: number): Promise<string> {
  const key = deps.keys.statusReport(quarter.label);
  let html = pending.get(key);
  if (html === undefined) {
    html = cachedOrBuilt(deps, key, quarter, nowMs).finally(() => pending.delete(key));
    pending.set(key, html);
  }
  return html;
}

async function cachedOrBuilt(deps: IngressDeps, key: string, quarter: Quarter, nowMs: number): Promise<string> {
  const { redis } = deps;
  const cached = await redis.get(key);
  if (cached !== null) return cached;
  const lock = deps.keys.statusReport(`${quarter.label}:building`);
  const token = randomBytes(8).toString("hex");
  if ((await redis.set(lock, token, "PX", LOCK_MS, "NX")) === "OK") {
    try {
      const html = renderReport(await reportData(deps.readDb, quarter, deps.config.statusPageName, nowMs));
      await redis.set(key, html, "EX", reportTtlSeconds(quarter, nowMs));
      return html;
    } finally {
      await redis.eval(RELEASE, 1, lock, token).catch(() => {});
    }
  }
  // Another process builds it: wait for its copy (bounded by its lock), or build if it gave up.
  const deadline = Date.now() + LOCK_MS;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    const found = await redis.get(key);
    if (found !== null) return found;
    if ((await redis.exists(lock)) === 0) return cachedOrBuilt(deps, key, quarter, nowMs);
  }
  throw new Error(`status report ${quarter.label}: no copy and the build lock never released`);
}
