import { createHash } from "node:crypto";
import type { Redis } from "../../shared/platform/redis/client.js";
import { claimDueScans, pruneSchedule, scheduleDomain, unscheduledDomains, SCAN_STREAM, type ScanJob } from "../../shared/scans/index.js";
import { transaction, type Pool } from "../../shared/platform/db/pool.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { publish } from "../../shared/platform/streams/envelope.js";

/** Scan jobs published per run at most; the rest wait for the next run (a minute later at most). */
export const MONITOR_BATCH = 200;

export interface MonitorDeps {
  db: Pool;
  redis: Redis;
  keys: Keys;
  nowMs: number;
  periodMs: number;
}

/**
 * Where in the period a domain's re-scan falls: a stable hash of organization and domain,
 * so the work spreads evenly over the period and a domain keeps its time of day.
 */
export function offsetOf(orgId: number, domain: string, periodMs: number): number {
  const digest = createHash("sha256").update(`${orgId}:${domain}`).digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(periodMs));
}

/** The first run of a newly seen domain: its offset in the current period, or the next one if that has passed. */
export function firstRunOf(orgId: number, domain: string, nowMs: number, periodMs: number): number {
  const at = Math.floor(nowMs / periodMs) * periodMs + offsetOf(orgId, domain, periodMs);
  return at > nowMs ? at : at + periodMs;
}

/** The scan job of one scheduled run; its id is fixed per slot so a repeat is stored once by the scanner. */
export function monitorJob(orgId: number, domain: string, slotMs: number): ScanJob {
  const name = createHash("sha256").update(domain).digest("hex").slice(0, 16);
  return { job_id: `monitor:${orgId}:${Math.floor(slotMs / 1000)}:${name}`, org_id: orgId, domain, trigger: "monitor" };
}

/**
 * One monitor run: schedule newly verified domains, forget unverified ones, and publish
 * the scan jobs of due domains to the scanner (fire and forget: nobody waits for the
 * reply). Jobs are published inside the claiming transaction: a crash before COMMIT
 * publishes them again under the same job ids, which the scanner stores once.
 */
export async function runMonitor(deps: MonitorDeps): Promise<number> {
  for (const { org_id: orgId, domain } of await unscheduledDomains(deps.db)) {
    await scheduleDomain(deps.db, orgId, domain, firstRunOf(orgId, domain, deps.nowMs, deps.periodMs));
  }
  await pruneSchedule(deps.db);
  return transaction(deps.db, async (tx) => {
    const due = await claimDueScans(tx, deps.nowMs, deps.periodMs, MONITOR_BATCH);
    for (const scan of due) await publish(deps.redis, deps.keys.stream(SCAN_STREAM), monitorJob(scan.org_id, scan.domain, scan.slot_ms));
    return due.length;
  });
}
