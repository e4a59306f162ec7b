/**
 * Status: services, checks and incidents, the status document, its cache and renderings.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export { type CachedStatus, createStatusCache, type StatusCache } from "./cache.js";
export {
  addIncidentUpdate,
  cancelMaintenance,
  createIncident,
  createMaintenance,
  findIncident,
  findMaintenance,
  type Impact,
  INCIDENT_STATUSES,
  type IncidentStatus,
  latestIncidents,
  latestMaintenance,
  patchIncident,
  updateMaintenance,
} from "./db/incidents.js";
export {
  backfillRollups,
  recentChecks,
  type CheckRow,
  DEFAULT_SERVICE_NAMES,
  insertCheck,
  listServices,
  pruneChecks,
  SERVICE_KEYS,
  type ServiceKey,
  type ServiceRow,
  statusActivity,
  upsertService,
} from "./db/status.js";
export { incidentView, iso, maintenanceRecord, type StatusSnapshot } from "./document.js";
export { renderAtom } from "./render/atom.js";
export { badgeLanguage, renderBadge } from "./render/badge.js";
export { renderPage } from "./render/page.js";
export { renderReport } from "./render/report.js";
export { renderSummary } from "./render/summary.js";
export { currentQuarter, parseQuarter, reportData } from "./report.js";
export { incidentMoveAllowed } from "./rules.js";
