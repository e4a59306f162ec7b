import {
  activeMaintenance,
  currentIncidents,
  latestIncidents,
  latestMaintenance,
  type Incident,
  type MaintenanceRow,
} from "./db/incidents.js";
import type { Queryable } from "../platform/db/pool.js";
import {
  DEFAULT_SERVICE_NAMES,
  SERVICE_KEYS,
  dailyRollups,
  listServices,
  recentChecks,
  uptimeBetween,
  type CheckRow,
  type ServiceKey,
} from "./db/status.js";
import { RULES, componentStatus, indicatorDescription, indicatorOf, uptimePct, type ComponentStatus, type Indicator } from "./rules.js";

/** The public status document (interface.md 2.9) and what the page, feed and badge add to it. */

const DAY_MS = 86_400_000;
/** Entries of the Atom feed (incidents and maintenance each). */
export const FEED_ENTRIES = 50;

export function iso(value: Date | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export interface IncidentView {
  id: number;
  title: string;
  impact: "minor" | "major";
  status: string;
  affects: ServiceKey[];
  created_at: string;
  resolved_at: string | null;
  updated_at: string;
  postmortem: string | null;
  updates: { status: string; body: string; at: string }[];
}

export interface MaintenanceView {
  id: number;
  title: string;
  body: string;
  affects: ServiceKey[];
  starts_at: string;
  ends_at: string;
}

export interface MaintenanceRecord extends MaintenanceView {
  created_at: string;
  updated_at: string;
  cancelled_at: string | null;
}

export interface ServiceUptime {
  name: string;
  uptime_pct: number | null;
  checks: number;
  typical_ms: number | null;
}

export interface StatusDocument {
  status: { indicator: Indicator; description: string };
  components: { key: ServiceKey; name: string; status: ComponentStatus; checked_at: string | null }[];
  uptime_30d: { overall_pct: number | null; checks: number; services: Record<ServiceKey, ServiceUptime> } | null;
  incidents: { open: IncidentView[]; recent: IncidentView[] };
  maintenance: { in_progress: MaintenanceView[]; upcoming: MaintenanceView[] };
  page: {
    name: string;
    url: string;
    generated_at: string;
    feed_url: string;
    report_url: string;
    badge_url: string;
    summary_url: string;
    document_url: string;
  };
}

export interface DayBar {
  date: string;
  checks: number;
  uptime_pct: number | null;
}

/** Everything the renderers need, built once a minute and cached (shared/status/cache.ts). */
export interface StatusSnapshot {
  document: StatusDocument;
  /** 90 days of daily uptime per service, oldest first; null when the checks cannot be read. */
  bars: Record<ServiceKey, DayBar[]> | null;
  /** The newest incidents and maintenance whatever their state, for the Atom feed. */
  history: { incidents: IncidentView[]; maintenance: MaintenanceRecord[] };
}

export interface BuildOptions {
  nowMs: number;
  siteUrl: string;
  pageName: string;
  probeIntervalS: number;
  slowMs: number;
}

export function incidentView(incident: Incident): IncidentView {
  return {
    id: incident.id,
    title: incident.title,
    impact: incident.impact,
    status: incident.status,
    affects: incident.affects,
    created_at: iso(incident.created_at) as string,
    resolved_at: iso(incident.resolved_at),
    updated_at: iso(incident.updated_at ?? incident.created_at) as string,
    postmortem: incident.postmortem,
    updates: incident.updates.map((u) => ({ status: u.status, body: u.body, at: iso(u.at) as string })),
  };
}

export function maintenanceView(row: MaintenanceRow): MaintenanceView {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    affects: row.affects,
    starts_at: iso(row.starts_at) as string,
    ends_at: iso(row.ends_at) as string,
  };
}

export function maintenanceRecord(row: MaintenanceRow): MaintenanceRecord {
  return {
    ...maintenanceView(row),
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at ?? row.created_at) as string,
    cancelled_at: iso(row.cancelled_at),
  };
}

function pageLinks(siteUrl: string) {
  return {
    url: `${siteUrl}/status`,
    feed_url: `${siteUrl}/status/feed.atom`,
    report_url: `${siteUrl}/status/report`,
    badge_url: `${siteUrl}/status-badge.php`,
    summary_url: `${siteUrl}/status/summary.json`,
    document_url: `${siteUrl}/api/status.php`,
  };
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

async function readChecks(db: Queryable, options: BuildOptions) {
  const { nowMs } = options;
  const recentSince = nowMs - RULES.RECENT_INTERVALS * options.probeIntervalS * 1000;
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const barsFrom = today - (RULES.BAR_DAYS - 1) * DAY_MS;
  const [recent, uptime, daily] = await Promise.all([
    recentChecks(db, recentSince, nowMs, RULES.RECENT_CHECKS),
    uptimeBetween(db, nowMs - RULES.UPTIME_DAYS * DAY_MS, nowMs + 1),
    // The bars read the daily roll-ups (at most BAR_DAYS rows per service), never the raw checks.
    dailyRollups(db, barsFrom, today + DAY_MS),
  ]);
  return { recent, uptime, daily, barsFrom };
}

/** Reads PostgreSQL once and assembles the snapshot. Failing check reads give uptime_30d null, not a failed page. */
export async function buildSnapshot(db: Queryable, options: BuildOptions): Promise<StatusSnapshot> {
  const { nowMs } = options;
  const [services, incidents, maintenance, latest, latestWindows] = await Promise.all([
    listServices(db),
    currentIncidents(db, nowMs - RULES.RECENT_INCIDENT_DAYS * DAY_MS),
    activeMaintenance(db, nowMs),
    latestIncidents(db, FEED_ENTRIES),
    latestMaintenance(db, FEED_ENTRIES),
  ]);
  const checks = await readChecks(db, options).catch(() => null);
  const byKey = new Map(services.map((s) => [s.key, s]));
  const name = (key: ServiceKey) => byKey.get(key)?.name ?? DEFAULT_SERVICE_NAMES[key];
  const recentOf = (key: ServiceKey): CheckRow[] => checks?.recent.filter((c) => c.service === key) ?? [];

  const components = SERVICE_KEYS.map((key) => {
    const recent = recentOf(key);
    const configured = Boolean(byKey.get(key)?.url);
    return {
      key,
      name: name(key),
      status: componentStatus(
        configured,
        recent.map((c) => ({ ok: c.ok, latencyMs: c.latency_ms })),
        options.slowMs,
      ),
      checked_at: configured ? iso(recent[0]?.at) : null,
    };
  });

  let uptime: StatusDocument["uptime_30d"] = null;
  let bars: StatusSnapshot["bars"] = null;
  if (checks !== null) {
    const rows = new Map(checks.uptime.map((r) => [r.service, r]));
    const perService = Object.fromEntries(
      SERVICE_KEYS.map((key) => {
        const row = rows.get(key);
        const checksCount = row?.checks ?? 0;
        const median = row?.median_ms ?? null;
        return [
          key,
          {
            name: name(key),
            uptime_pct: uptimePct(row?.up ?? 0, checksCount),
            checks: checksCount,
            typical_ms: median === null ? null : Math.round(Number(median)),
          },
        ];
      }),
    ) as Record<ServiceKey, ServiceUptime>;
    const total = checks.uptime.reduce((sum, r) => sum + r.checks, 0);
    const up = checks.uptime.reduce((sum, r) => sum + r.up, 0);
    uptime = { overall_pct: uptimePct(up, total), checks: total, services: perService };
    bars = Object.fromEntries(
      SERVICE_KEYS.map((key) => {
        const days = new Map(checks.daily.filter((d) => d.service === key).map((d) => [d.day, d]));
        return [
          key,
          Array.from({ length: RULES.BAR_DAYS }, (_, i) => {
            const date = dayOf(checks.barsFrom + i * DAY_MS);
            const day = days.get(date);
            return { date, checks: day?.checks ?? 0, uptime_pct: uptimePct(day?.up ?? 0, day?.checks ?? 0) };
          }),
        ];
      }),
    ) as Record<ServiceKey, DayBar[]>;
  }

  const open = incidents.filter((i) => i.resolved_at === null);
  const inProgress = maintenance.filter((m) => m.starts_at.getTime() <= nowMs);
  const indicator = indicatorOf({
    components: components.map((c) => c.status),
    openImpacts: open.map((i) => i.impact),
    maintenanceRunning: inProgress.length > 0,
  });
  const document: StatusDocument = {
    status: {
      indicator,
      description: indicatorDescription(
        indicator,
        components.map((c) => c.status),
      ),
    },
    components,
    uptime_30d: uptime,
    incidents: { open: open.map(incidentView), recent: incidents.filter((i) => i.resolved_at !== null).map(incidentView) },
    maintenance: {
      in_progress: inProgress.map(maintenanceView),
      upcoming: maintenance.filter((m) => m.starts_at.getTime() > nowMs).map(maintenanceView),
    },
    page: { name: options.pageName, generated_at: iso(nowMs) as string, ...pageLinks(options.siteUrl) },
  };
  return { document, bars, history: { incidents: latest.map(incidentView), maintenance: latestWindows.map(maintenanceRecord) } };
}
