import { createHash } from "node:crypto";
import type { Redis } from "../../shared/platform/redis/client.js";
import { claimDueScans, pruneSchedule, scheduleDomain, unscheduledDomains, SCAN_STREAM, type ScanJob } from "../../shared/scans/index.js";
import { hmacBytes } from "../../shared/platform/crypto/hash.js";
import { deriveKey } from "../../shared/platform/crypto/seal.js";
import { transaction, type Pool } from "../../shared/platform/db/pool.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { publish } from "../../shared/platform/streams/envelope.js";

/** Scan jobs published per run at most; the rest wait for the next run (a minute later at most). */
export const MONITOR_BATCH = 200;
/**
 * Scan jobs of one organization per run at most; its other due domains stay due for the next
 * run. An organization's domains fall due at random minutes, a handful at once at most (500
 * domains over a day's 1,440 minutes), so the cap only bites on a backlog (after the monitor
 * was down): then every organization with due domains gets its share of each run's 200.
 */
export const MONITOR_PER_ORG = 10;

export interface MonitorDeps {
  db: Pool;
  redis: Redis;
  keys: Keys;
  nowMs: number;
  periodMs: number;
  /** monitorScheduleKey(master secret): keys the offsets. */
  scheduleKey: Buffer;
}

/** The key of the schedule's offsets, derived from the master secret (GATEWAY_SECRET). */
export function monitorScheduleKey(masterSecret: Buffer): Buffer {
  return deriveKey(masterSecret, "monitor-schedule:v1");
}

/**
 * Where in the period a domain's re-scan falls: an HMAC of organization and domain under a
 * server secret, so the work spreads evenly over the period and a domain keeps its time of
 * day. Keyed, because a plain hash of names the customer picks can be ground offline: an
 * organization could choose subdomains that all fall due in one minute and flood the scan
 * stream ahead of everyone else.
 */
export function offsetOf(scheduleKey: Buffer, orgId: number, domain: string, periodMs: number): number {
  const digest = hmacBytes(scheduleKey, Buffer.from(`${orgId}:${domain}`));
  return Number(digest.readBigUInt64BE(0) % BigInt(periodMs));
}

/** The next run of a domain after `nowMs`: its offset in the current period, or the next one if that has passed. */
export function firstRunOf(scheduleKey: Buffer, orgId: number, domain: string, nowMs: number, periodMs: number): number {
  const at = Math.floor(nowMs / periodMs) * periodMs + offsetOf(scheduleKey, orgId, domain, periodMs);
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
 * reply), at most MONITOR_PER_ORG of one organization. A claimed domain moves to its next
 * slot at its keyed offset (a row scheduled under another key, or before offsets were
 * keyed, moves there once). Jobs are published inside the claiming transaction: a crash
 * before COMMIT publishes them again under the same job ids, which the scanner stores once.
 */
export async function runMonitor(deps: MonitorDeps): Promise<number> {
  const nextRun = (orgId: number, domain: string) => firstRunOf(deps.scheduleKey, orgId, domain, deps.nowMs, deps.periodMs);
  for (const { org_id: orgId, domain } of await unscheduledDomains(deps.db)) {
    await scheduleDomain(deps.db, orgId, domain, nextRun(orgId, domain));
  }
  await pruneSchedule(deps.db);
  return transaction(deps.db, async (tx) => {
    const due = await claimDueScans(tx, { nowMs: deps.nowMs, limit: MONITOR_BATCH, perOrg: MONITOR_PER_ORG, nextRunMs: nextRun });
    for (const scan of due) await publish(deps.redis, deps.keys.stream(SCAN_STREAM), monitorJob(scan.org_id, scan.domain, scan.slot_ms));
    return due.length;
  });
}
