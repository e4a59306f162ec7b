import type { IncidentView, MaintenanceView, StatusSnapshot } from "../document.js";
import type { ComponentStatus, Indicator } from "../rules.js";

/**
 * The Atlassian Statuspage `api/v2/summary.json` shape, so existing widgets and monitoring
 * integrations read this page unchanged. Mapping (docs/status.md, "summary.json"):
 * indicator ok/degraded/down/maintenance → none/minor/major/maintenance; component
 * operational/degraded/outage → operational/degraded_performance/major_outage, and
 * under_maintenance while running maintenance affects it and nothing is worse;
 * not_configured components are left out (Statuspage has no such state).
 */

const INDICATORS: Readonly<Record<Indicator, { indicator: string; description: string }>> = {
  ok: { indicator: "none", description: "All Systems Operational" },
  degraded: { indicator: "minor", description: "Partial System Outage" },
  down: { indicator: "major", description: "Major Service Outage" },
  maintenance: { indicator: "maintenance", description: "Service Under Maintenance" },
};

const COMPONENTS: Readonly<Record<Exclude<ComponentStatus, "not_configured">, string>> = {
  operational: "operational",
  degraded: "degraded_performance",
  outage: "major_outage",
};

const PAGE_ID = "gateway";

function affected(affects: readonly string[], key: string): boolean {
  return affects.length === 0 || affects.includes(key);
}

export function renderSummary(snapshot: StatusSnapshot): Record<string, unknown> {
  const doc = snapshot.document;
  const updatedAt = doc.page.generated_at;
  const running = doc.maintenance.in_progress;
  const components = doc.components
    .filter((c) => c.status !== "not_configured")
    .map((c, position) => {
      const maintained = c.status === "operational" && running.some((m) => affected(m.affects, c.key));
      return {
        id: c.key,
        name: c.name,
        status: maintained ? "under_maintenance" : COMPONENTS[c.status as keyof typeof COMPONENTS],
        created_at: updatedAt,
        updated_at: c.checked_at ?? updatedAt,
        position: position + 1,
        description: null,
        showcase: true,
        start_date: null,
        group_id: null,
        page_id: PAGE_ID,
        group: false,
        only_show_if_degraded: false,
      };
    });
  const componentRefs = (affects: readonly string[]) => components.filter((c) => affected(affects, c.id));
  const incident = (i: IncidentView) => ({
    id: String(i.id),
    name: i.title,
    status: i.status,
    created_at: i.created_at,
    updated_at: i.updated_at,
    monitoring_at: i.updates.find((u) => u.status === "monitoring")?.at ?? null,
    resolved_at: i.resolved_at,
    impact: i.impact,
    shortlink: `${doc.page.url}#incident-${i.id}`,
    started_at: i.created_at,
    page_id: PAGE_ID,
    incident_updates: i.updates.map((u, n) => ({
      id: `${i.id}-${i.updates.length - n}`,
      status: u.status,
      body: u.body,
      incident_id: String(i.id),
      created_at: u.at,
      updated_at: u.at,
      display_at: u.at,
      affected_components: null,
      deliver_notifications: true,
      custom_tweet: null,
      tweet_id: null,
    })),
    components: componentRefs(i.affects),
  });
  const maintenance = (m: MaintenanceView, status: string) => ({
    id: `m${m.id}`,
    name: m.title,
    status,
    created_at: m.starts_at,
    updated_at: updatedAt,
    monitoring_at: null,
    resolved_at: null,
    impact: "maintenance",
    shortlink: `${doc.page.url}#maintenance-${m.id}`,
    started_at: m.starts_at,
    page_id: PAGE_ID,
    incident_updates: m.body
      ? [
          {
            id: `m${m.id}-1`,
            status,
            body: m.body,
            incident_id: `m${m.id}`,
            created_at: m.starts_at,
            updated_at: m.starts_at,
            display_at: m.starts_at,
            affected_components: null,
            deliver_notifications: true,
            custom_tweet: null,
            tweet_id: null,
          },
        ]
      : [],
    components: componentRefs(m.affects),
    scheduled_for: m.starts_at,
    scheduled_until: m.ends_at,
  });
  return {
    page: { id: PAGE_ID, name: doc.page.name, url: doc.page.url, time_zone: "Etc/UTC", updated_at: updatedAt },
    components,
    incidents: doc.incidents.open.map(incident),
    scheduled_maintenances: [
      ...running.map((m) => maintenance(m, "in_progress")),
      ...doc.maintenance.upcoming.map((m) => maintenance(m, "scheduled")),
    ],
    status: INDICATORS[doc.status.indicator],
  };
}
