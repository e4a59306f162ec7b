import autocannon from "autocannon";
import type { Redis } from "ioredis";

/** One load run with the benchmark's fixed settings, and the numbers read around it. */

export interface LoadSettings {
  connections: number;
  /** Seconds of measured load per target, split over `rounds` interleaved runs. */
  durationS: number;
  warmupS: number;
  rounds: number;
}

export interface LoadResult {
  name: string;
  rps: number;
  /** Mean of the rounds' medians and the worst round's p99, in ms. */
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
}

export interface Target {
  name: string;
  url: string;
  /** This target's own JSON body (default: the one driveAll is given). */
  body?: string;
  /** Headers besides content-type (the botcheck targets send a browser's). */
  headers?: Record<string, string>;
}

/** One autocannon run: POST of a JSON body. */
async function once(target: Target, body: string, connections: number, durationS: number) {
  const headers = { ...(target.headers ?? {}), "content-type": "application/json" };
  return autocannon({ url: target.url, connections, duration: durationS, method: "POST", headers, body: target.body ?? body });
}

/**
 * Warms every target, then runs them in turn, round after round, so that a neighbour's
 * burst of CPU on a shared machine falls on all of them alike rather than on one.
 */
export async function driveAll(targets: readonly Target[], body: string, settings: LoadSettings): Promise<LoadResult[]> {
  if (settings.warmupS > 0) for (const t of targets) await once(t, body, settings.connections, settings.warmupS);
  const perRound = Math.max(1, Math.round(settings.durationS / settings.rounds));
  const totals = targets.map((t) => ({ name: t.name, ok: 0, non2xx: 0, errors: 0, p50s: [] as number[], p99: 0 }));
  for (let round = 0; round < settings.rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const r = await once(targets[i], body, settings.connections, perRound);
      const total = totals[i];
      total.ok += r["2xx"];
      total.non2xx += r.non2xx;
      total.errors += r.errors + r.timeouts;
      total.p50s.push(r.latency.p50);
      total.p99 = Math.max(total.p99, r.latency.p99);
    }
  }
  const seconds = perRound * settings.rounds;
  return totals.map((t) => ({
    name: t.name,
    rps: t.ok / seconds,
    p50: t.p50s.reduce((a, b) => a + b, 0) / t.p50s.length,
    p99: t.p99,
    requests: t.ok + t.non2xx,
    errors: t.errors,
    non2xx: t.non2xx,
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
