import autocannon from "autocannon";
import { readFileSync } from "node:fs";
import type { Redis } from "../../shared/platform/redis/client.js";
import { wrkAvailable, wrkOnce, type WrkRun } from "./wrk.js";

/** One load run with the benchmark's fixed settings, and the numbers read around it. */

export interface LoadSettings {
  connections: number;
  /** Seconds of each measured run of a target; every target runs once per round. */
  roundS: number;
  warmupS: number;
  rounds: number;
}

export interface LoadResult {
  name: string;
  /** Medians over the rounds: req/s, p50 and p99 in ms. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** Median CPU time (user + system) the server process(es) spent per request, in µs; NaN when unknown. */
  cpuUs: number;
  /** The same for each companion process of the target (Redis, the usage actor, PostgreSQL), by name. */
  companionsUs: Record<string, number>;
}

/**
 * A process that works for a target without being it (Redis, the usage actor, PostgreSQL's
 * backends): on 2 cores it takes CPU from the same pool, so its time per request belongs to
 * the target's cost. `pids` is asked before and after each round (backends come and go).
 */
export interface Companion {
  name: string;
  pids(): Promise<readonly number[]>;
}

export interface Target {
  name: string;
  url: string;
  /** This target's own JSON body (default: the one driveAll is given). */
  body?: string;
  /** Headers besides content-type (the botcheck targets send a browser's). */
  headers?: Record<string, string>;
  /** The server's processes, whose CPU time per request is reported (robust to a busy neighbour, unlike req/s). */
  pids?: readonly number[];
  companions?: readonly Companion[];
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN off Linux or when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the name), in clock ticks (100 Hz).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** A load generator: wrk when installed, else autocannon spread over worker threads. */
export interface Driver {
  name: string;
  once(target: Target, body: string, connections: number, durationS: number): Promise<WrkRun>;
}

export async function chooseDriver(): Promise<Driver> {
  if (await wrkAvailable()) {
    return { name: "wrk (1 thread)", once: (t, body, c, d) => wrkOnce(t.url, t.body ?? body, t.headers ?? {}, c, d, 1) };
  }
  return {
    name: "autocannon with 2 workers (wrk not installed: `apt-get install wrk`; autocannon may cap the bare servers)",
    once: autocannonOnce,
  };
}

async function autocannonOnce(target: Target, body: string, connections: number, durationS: number): Promise<WrkRun> {
  const headers = { ...(target.headers ?? {}), "content-type": "application/json" };
  const r = await autocannon({
    url: target.url,
    connections,
    duration: durationS,
    method: "POST",
    headers,
    body: target.body ?? body,
    workers: 2,
  });
  return {
    requests: r["2xx"] + r.non2xx,
    rps: r["2xx"] / durationS,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

/** CPU seconds per process of `pids` now. */
function cpuOf(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuSeconds(pid)]));
}

/**
 * CPU seconds the processes used between two samples; a process first seen in `after`
 * started meanwhile (counted from 0), one gone from `after` is lost. NaN when nothing was read.
 */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  let read = false;
  for (const [pid, seconds] of after) {
    if (!Number.isFinite(seconds)) continue;
    const start = before.get(pid);
    total += seconds - (start !== undefined && Number.isFinite(start) ? start : 0);
    read = true;
  }
  return read ? total : NaN;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Warms every target, then runs them in turn, round after round, so that a neighbour's
 * burst of CPU on a shared machine falls on all of them alike rather than on one; each
 * figure is the median of the rounds.
 */
export async function driveAll(driver: Driver, targets: readonly Target[], body: string, settings: LoadSettings): Promise<LoadResult[]> {
  if (settings.warmupS > 0) for (const t of targets) await driver.once(t, body, settings.connections, settings.warmupS);
  const runs: WrkRun[][] = targets.map(() => []);
  const cpu: number[][] = targets.map(() => []);
  const companionCpu: Map<string, number[]>[] = targets.map(() => new Map());
  for (let round = 0; round < settings.rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const target = targets[i];
      const companions = target.companions ?? [];
      const companionsBefore = await Promise.all(companions.map(async (c) => cpuOf(await c.pids())));
      const before = cpuOf(target.pids ?? []);
      const run = await driver.once(target, body, settings.connections, settings.roundS);
      const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(run.requests, 1);
      cpu[i].push(perRequest(cpuBetween(before, cpuOf(target.pids ?? []))));
      for (let c = 0; c < companions.length; c++) {
        const after = cpuOf([...new Set([...companionsBefore[c].keys(), ...(await companions[c].pids())])]);
        const list = companionCpu[i].get(companions[c].name) ?? [];
        list.push(perRequest(cpuBetween(companionsBefore[c], after)));
        companionCpu[i].set(companions[c].name, list);
      }
      runs[i].push(run);
    }
  }
  return targets.map((t, i) => ({
    name: t.name,
    rps: median(runs[i].map((r) => r.rps)),
    p50: median(runs[i].map((r) => r.p50)),
    p99: median(runs[i].map((r) => r.p99)),
    requests: runs[i].reduce((sum, r) => sum + r.requests, 0),
    errors: runs[i].reduce((sum, r) => sum + r.errors, 0),
    non2xx: runs[i].reduce((sum, r) => sum + r.non2xx, 0),
    cpuUs: median(cpu[i]),
    companionsUs: Object.fromEntries([...companionCpu[i]].map(([name, values]) => [name, median(values)])),
  }));
}

/** Prometheus text → value of one unlabelled counter (0 when absent). */
export function counterValue(metricsText: string, name: string): number {
  const line = metricsText.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  return response.text();
}

/** Calls per command from INFO commandstats (server-wide: other clients of this Redis add to it). */
export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const out = new Map<string, number>();
  for (const line of info.split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) out.set(match[1], Number(match[2]));
  }
  return out;
}

export function statsDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [command, calls] of after) {
    const delta = calls - (before.get(command) ?? 0);
    if (delta > 0) out.set(command, delta);
  }
  return out;
}
