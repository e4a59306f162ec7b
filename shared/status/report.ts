import { incidentsBetween, maintenanceBetween } from "./db/incidents.js";
import type { Queryable } from "../platform/db/pool.js";
import { DEFAULT_SERVICE_NAMES, SERVICE_KEYS, listServices, monthlyUptime, uptimeBetween, type ServiceKey } from "./db/status.js";
import { incidentView, maintenanceView, type IncidentView, type MaintenanceView } from "./document.js";
import { uptimePct } from "./rules.js";

/** The quarterly report's data: uptime per service per month, the quarter's incidents and maintenance. */

export interface Quarter {
  readonly label: string;
  readonly year: number;
  readonly q: number;
  readonly fromMs: number;
  readonly toMs: number;
  readonly months: readonly string[];
}

export interface UptimeCell {
  uptime_pct: number | null;
  checks: number;
  typical_ms: number | null;
}

export interface ReportData {
  quarter: Quarter;
  pageName: string;
  generatedAt: string;
  services: { key: ServiceKey; name: string; months: UptimeCell[]; total: UptimeCell }[];
  incidents: IncidentView[];
  maintenance: MaintenanceView[];
}

export function quarterOf(year: number, q: number): Quarter {
  const fromMs = Date.UTC(year, (q - 1) * 3, 1);
  const toMs = Date.UTC(year, q * 3, 1);
  const months = [0, 1, 2].map((i) => new Date(Date.UTC(year, (q - 1) * 3 + i, 1)).toISOString().slice(0, 7));
  return { label: `${year}-Q${q}`, year, q, fromMs, toMs, months };
}

export function currentQuarter(nowMs: number): Quarter {
  const now = new Date(nowMs);
  return quarterOf(now.getUTCFullYear(), Math.floor(now.getUTCMonth() / 3) + 1);
}

/** `2026-Q4` (case-insensitive); null for a malformed quarter or one that has not begun. */
export function parseQuarter(raw: string, nowMs: number): Quarter | null {
  const match = /^(\d{4})-[Qq]([1-4])$/.exec(raw.trim());
  if (!match || Number(match[1]) < 2000) return null;
  const quarter = quarterOf(Number(match[1]), Number(match[2]));
  return quarter.fromMs > nowMs ? null : quarter;
}

function cell(row: { checks: number; up: number; median_ms: number | null } | undefined): UptimeCell {
  const checks = row?.checks ?? 0;
  const median = row?.median_ms ?? null;
  return { uptime_pct: uptimePct(row?.up ?? 0, checks), checks, typical_ms: median === null ? null : Math.round(Number(median)) };
}

export async function reportData(db: Queryable, quarter: Quarter, pageName: string, nowMs: number): Promise<ReportData> {
  const [services, monthly, totals, incidents, maintenance] = await Promise.all([
    listServices(db),
    monthlyUptime(db, quarter.fromMs, quarter.toMs),
    uptimeBetween(db, quarter.fromMs, quarter.toMs),
    incidentsBetween(db, quarter.fromMs, quarter.toMs),
    maintenanceBetween(db, quarter.fromMs, quarter.toMs),
  ]);
  const names = new Map(services.map((s) => [s.key, s.name]));
  return {
    quarter,
    pageName,
    generatedAt: new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, "Z"),
    services: SERVICE_KEYS.map((key) => ({
      key,
      name: names.get(key) ?? DEFAULT_SERVICE_NAMES[key],
      months: quarter.months.map((month) => cell(monthly.find((r) => r.service === key && r.month === month))),
      total: cell(totals.find((r) => r.service === key)),
    })),
    incidents: incidents.map(incidentView),
    maintenance: maintenance.map(maintenanceView),
  };
}
