import type { Pool } from "../../shared/platform/db/pool.js";
import { transaction } from "../../shared/platform/db/pool.js";
import {
  applyNewUsage,
  markApplied,
  writeCycles,
  writeDaily,
  writeInstallations,
  writeLastUsed,
  type DailyRow,
  type InstallationUsageRow as InstallationRow,
  type UsageBatch,
  type PendingInstallation,
} from "../../shared/verify/index.js";
import { announcePendingInstallations } from "./pending.js";

/**
 * Usage accounting: stream messages (each the events of one verify batch) → usage_daily per
 * key/day/endpoint/reason, the organization's cycle_usage, and installations (new ones, and
 * sightings at most once a minute per installation that move last_seen_at), in one
 * transaction together with each message's row in usage_applied. The messages of one
 * transaction are summed first (writer.ts gathers the messages read together), so a busy
 * stream costs one transaction per read, not one per message; when every message is new
 * (nearly always) that transaction is one statement, one round trip (applyNewUsage, shared/verify/db/usage.ts). A
 * redelivered message finds its row and adds nothing, so redelivery never counts twice.
 *
 * Rows are written in a fixed order (markers sorted by stream and id; sorted keys; daily,
 * then cycles, then installations, then each key's last use, then the notices of
 * installations first recorded pending, by organization) so concurrent consumers touching
 * the same rows cannot deadlock.
 */

/** One stream message to apply. */
export interface UsageMessage {
  batch: UsageBatch;
  stream: string;
  messageId: string;
}

export interface ApplyContext {
  db: Pool;
  stream: string;
  messageId: string;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The rows the events of `batches` add, summed per row and sorted. */
export function aggregate(batches: readonly UsageBatch[]) {
  const daily = new Map<string, DailyRow>();
  const cycles = new Map<string, { org: number; cycle: number; used: number }>();
  const installs = new Map<string, InstallationRow>();
  const lastUsed = new Map<number, number>();
  const pending = new Map<string, PendingInstallation>();
  const rowOf = (day: string, key: number, org: number, endpoint: string, reason: string): DailyRow => {
    const dayKey = `${day}\u0000${key}\u0000${endpoint}\u0000${reason}`;
    let found = daily.get(dayKey);
    if (!found) {
      found = { day, key, org, endpoint, reason, counted: 0, refused: 0, calls: 0 };
      daily.set(dayKey, found);
    }
    return found;
  };
  const addCycle = (org: number, cycle: number, used: number) => {
    const cycleKey = `${org}:${cycle}`;
    const entry = cycles.get(cycleKey);
    if (entry) entry.used += used;
    else cycles.set(cycleKey, { org, cycle, used });
  };
  for (const { day, at, events } of batches) {
    for (const e of events) {
      if (e.refund === 1) {
        // Undo n `ok` calls (counted) and record them under the fault's reason, uncounted.
        const okRow = rowOf(day, e.key, e.org, e.endpoint, "ok");
        okRow.calls -= e.n;
        okRow.counted -= e.n;
        const faulted = rowOf(day, e.key, e.org, e.endpoint, e.reason);
        faulted.calls += e.n;
        faulted.refused += e.n;
        addCycle(e.org, e.cycle, -e.n);
        continue;
      }
      const row = rowOf(day, e.key, e.org, e.endpoint, e.reason);
      lastUsed.set(e.key, Math.max(lastUsed.get(e.key) ?? 0, at));
      row.calls += e.n;
      row.counted += e.counted * e.n;
      if (e.reason !== "ok") row.refused += e.n;
      if (e.counted === 1) addCycle(e.org, e.cycle, e.n);
      if (e.install !== undefined && e.install_status !== undefined) {
        const installKey = `${e.key}\u0000${e.install}`;
        const seen = installs.get(installKey);
        // The first status recorded wins, as it does in PostgreSQL (writeInstallations).
        if (seen) {
          seen.firstMs = Math.min(seen.firstMs, at);
          seen.lastMs = Math.max(seen.lastMs, at);
        } else {
          installs.set(installKey, { key: e.key, install: e.install, status: e.install_status, firstMs: at, lastMs: at });
        }
        // Recorded pending by this call: the owner is told (pending.ts), once.
        if (e.install_new === 1 && e.install_status === "pending" && !pending.has(installKey)) {
          pending.set(installKey, { keyId: e.key, install: e.install, atMs: at });
        }
      }
    }
  }
  return {
    daily: [...daily.values()].sort(
      (a, b) => compareText(a.day, b.day) || a.key - b.key || compareText(a.endpoint, b.endpoint) || compareText(a.reason, b.reason),
    ),
    cycles: [...cycles.values()].sort((a, b) => a.org - b.org || a.cycle - b.cycle),
    installs: [...installs].sort(([a], [b]) => compareText(a, b)).map(([, row]) => row),
    lastUsed: [...lastUsed].sort(([a], [b]) => a - b).map(([key, atMs]) => ({ key, atMs })),
    pending: [...pending.values()],
  };
}

/**
 * Applies messages in one transaction; returns, per message, whether it was applied now
 * (false: applied before, or repeated in `messages`, and so added nothing).
 *
 * Mostly every message is new: then one statement applies them all (applyNewUsage, shared/verify/db/usage.ts). When
 * one had been applied before (a redelivery), or some installation was first recorded
 * pending (its notice needs the installation row written first, pending.ts), the long
 * way: BEGIN, the markers, then the rows of the messages marked now, COMMIT.
 */
export async function applyUsageMessages(db: Pool, messages: readonly UsageMessage[]): Promise<boolean[]> {
  const seen = new Set<string>();
  const distinct: number[] = [];
  messages.forEach((m, i) => {
    const id = `${m.stream}\u0000${m.messageId}`;
    if (!seen.has(id)) {
      seen.add(id);
      distinct.push(i);
    }
  });
  const applied = messages.map(() => false);
  if (distinct.length === 0) return applied;
  // Markers are inserted in one order whoever inserts them, so two consumers applying
  // overlapping groups wait on each other instead of deadlocking. Rows are summed in the
  // order of `messages` (the first status recorded for an installation wins).
  const markerOrder = [...distinct].sort(
    (a, b) => compareText(messages[a].stream, messages[b].stream) || compareText(messages[a].messageId, messages[b].messageId),
  );
  const markers = markerOrder.map((i) => ({ stream: messages[i].stream, messageId: messages[i].messageId, atMs: messages[i].batch.at }));
  const all = aggregate(distinct.map((i) => messages[i].batch));
  if (all.pending.length === 0 && (await applyNewUsage(db, markers, all))) {
    for (const i of distinct) applied[i] = true;
    return applied;
  }
  return transaction(db, async (tx) => {
    const marked = await markApplied(tx, markers);
    const markedNow = new Set([...marked].map((position) => markerOrder[position]));
    const fresh = distinct.filter((i) => markedNow.has(i));
    const { daily, cycles, installs, lastUsed, pending } = aggregate(fresh.map((i) => messages[i].batch));
    await writeDaily(tx, daily);
    await writeCycles(tx, cycles);
    await writeInstallations(tx, installs);
    await writeLastUsed(tx, lastUsed);
    await announcePendingInstallations(tx, pending);
    for (const i of fresh) applied[i] = true;
    return applied;
  });
}

/** Applies one message; returns false when it had been applied before. */
export async function applyUsage(batch: UsageBatch, ctx: ApplyContext): Promise<boolean> {
  const [applied] = await applyUsageMessages(ctx.db, [{ batch, stream: ctx.stream, messageId: ctx.messageId }]);
  return applied;
}

export { APPLIED_RETENTION_MS, pruneApplied } from "../../shared/verify/index.js";
