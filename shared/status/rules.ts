/**
 * How the status page judges a service and the whole page, as data and pure functions.
 * Every number here is a documented decision (docs/status.md, "Thresholds").
 */

export type ComponentStatus = "operational" | "degraded" | "outage" | "not_configured";
export type Indicator = "ok" | "degraded" | "down" | "maintenance";

export const RULES = {
  /** Checks a component is judged on: the newest ones, within `RECENT_INTERVALS` probe intervals. */
  RECENT_CHECKS: 10,
  RECENT_INTERVALS: 11,
  /** This many failed checks in a row, newest first, make an outage (3 minutes at the default interval). */
  OUTAGE_CONSECUTIVE: 3,
  /** Any failure among the recent checks makes the component degraded. */
  DEGRADED_FAILURES: 1,
  /** The median latency of the newest successful checks above the slow threshold makes it degraded. */
  SLOW_SAMPLE: 3,
  /** Resolved incidents shown (interface.md section 8). */
  RECENT_INCIDENT_DAYS: 14,
  UPTIME_DAYS: 30,
  BAR_DAYS: 90,
} as const;

export interface Check {
  readonly ok: boolean;
  readonly latencyMs: number | null;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A component's status from its recent checks (newest first). No URL: not_configured.
 * No recent check yet (just configured, or the prober is not running): operational, with
 * `checked_at` null on the page, rather than an alarm nobody can act on.
 */
export function componentStatus(configured: boolean, recent: readonly Check[], slowMs: number): ComponentStatus {
  if (!configured) return "not_configured";
  const checks = recent.slice(0, RULES.RECENT_CHECKS);
  let consecutive = 0;
  while (consecutive < checks.length && !checks[consecutive].ok) consecutive++;
  if (consecutive >= RULES.OUTAGE_CONSECUTIVE) return "outage";
  if (checks.filter((c) => !c.ok).length >= RULES.DEGRADED_FAILURES) return "degraded";
  const latencies = checks
    .filter((c) => c.ok && c.latencyMs !== null)
    .slice(0, RULES.SLOW_SAMPLE)
    .map((c) => c.latencyMs as number);
  const typical = median(latencies);
  if (typical !== null && typical > slowMs) return "degraded";
  return "operational";
}

/**
 * The page's indicator. Precedence: down > degraded > maintenance > ok.
 * down: a component in outage, or an open incident of major impact.
 * degraded: a component degraded, or an open incident of minor impact.
 * maintenance: planned work running and nothing worse.
 */
export function indicatorOf(input: {
  components: readonly ComponentStatus[];
  openImpacts: readonly ("minor" | "major")[];
  maintenanceRunning: boolean;
}): Indicator {
  if (input.components.includes("outage") || input.openImpacts.includes("major")) return "down";
  if (input.components.includes("degraded") || input.openImpacts.includes("minor")) return "degraded";
  if (input.maintenanceRunning) return "maintenance";
  return "ok";
}

export const INDICATOR_DESCRIPTIONS: Readonly<Record<Indicator, string>> = {
  ok: "All systems operational",
  degraded: "Some systems are degraded",
  down: "Service outage",
  maintenance: "Planned maintenance in progress",
};

/**
 * The indicator in words. With no component monitored (a fresh install: no health URL set)
 * "ok" only means nothing is known to be wrong, so the words say that instead of claiming
 * every system operational.
 */
export function indicatorDescription(indicator: Indicator, components: readonly ComponentStatus[]): string {
  if (indicator === "ok" && components.every((c) => c === "not_configured")) return "No services monitored yet";
  return INDICATOR_DESCRIPTIONS[indicator];
}

/** Uptime as a percentage with three decimals (99.931), null without checks. */
export function uptimePct(up: number, checks: number): number | null {
  return checks === 0 ? null : Math.round((up / checks) * 100_000) / 1000;
}

/** Incident moves: from an open status to every status; resolved is final (a recurrence is a new incident). */
export function incidentMoveAllowed(from: string, to: string): boolean {
  return from !== "resolved" || to === "resolved";
}
