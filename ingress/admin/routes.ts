import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import { putContent, putSecret, removeContent, removeSecret } from "./content.js";
import { addDomain, verifyDomain } from "./domains.js";
import { addMember, createOrg, getOrg, patchOrg } from "./orgs.js";
import { decideInstallation, listInstallations } from "./installations.js";
import { createKey, getKey, keyTransition, patchKey, rotateKey } from "./keys.js";
import { acceptRisk, releaseRisk } from "./risks.js";
import {
  createDestination, getDestination, listDestinationDeadLetters, listOrgDestinations, removeDestination, retryDestinationDeadLetters,
  testDestination,
} from "./siem.js";
import { keyUsage } from "./usage.js";
import {
  addStatusIncidentUpdate, createStatusIncident, getStatusIncident, listStatusActivity, listStatusIncidents, listStatusServices,
  patchStatusIncident, putService,
} from "./status.js";
import {
  cancelStatusMaintenance, createStatusMaintenance, getStatusMaintenance, listStatusMaintenance, patchStatusMaintenance,
} from "./status-maintenance.js";
import { addNote, listNotes } from "./notes.js";
import { createWebhook, listOrgWebhooks, removeWebhook, webhookDeliveries } from "./webhooks.js";

/** The admin API (operator-api.md section 2); the test clock is registered with the system routes. */
export function registerAdminRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  add("POST", "/admin/v1/orgs", createOrg);
  add("GET", "/admin/v1/orgs/:org", getOrg);
  add("PATCH", "/admin/v1/orgs/:org", patchOrg);
  add("POST", "/admin/v1/orgs/:org/members", addMember);
  add("POST", "/admin/v1/orgs/:org/domains", addDomain);
  add("POST", "/admin/v1/orgs/:org/domains/:domain/verify", verifyDomain);
  add("POST", "/admin/v1/orgs/:org/keys", createKey);
  add("GET", "/admin/v1/keys/:id", getKey);
  add("PATCH", "/admin/v1/keys/:id", patchKey);
  add("POST", "/admin/v1/keys/:id/suspend", keyTransition("suspend"));
  add("POST", "/admin/v1/keys/:id/resume", keyTransition("resume"));
  add("POST", "/admin/v1/keys/:id/revoke", keyTransition("revoke"));
  add("POST", "/admin/v1/keys/:id/rotate", rotateKey);
  add("GET", "/admin/v1/keys/:id/installations", listInstallations);
  add("POST", "/admin/v1/keys/:id/installations/:install/approve", decideInstallation("approved"));
  add("POST", "/admin/v1/keys/:id/installations/:install/block", decideInstallation("blocked"));
  add("GET", "/admin/v1/keys/:id/usage", keyUsage);
  add("PUT", "/admin/v1/orgs/:org/content/:content_key", putContent);
  add("DELETE", "/admin/v1/orgs/:org/content/:content_key", removeContent);
  add("PUT", "/admin/v1/orgs/:org/secrets/:name", putSecret);
  add("DELETE", "/admin/v1/orgs/:org/secrets/:name", removeSecret);
  add("POST", "/admin/v1/orgs/:org/risks", acceptRisk);
  add("DELETE", "/admin/v1/orgs/:org/risks/:domain/:finding_key", releaseRisk);
  add("GET", "/admin/v1/status/services", listStatusServices);
  add("PUT", "/admin/v1/status/services/:service", putService);
  add("GET", "/admin/v1/status/incidents", listStatusIncidents);
  add("POST", "/admin/v1/status/incidents", createStatusIncident);
  add("GET", "/admin/v1/status/incidents/:id", getStatusIncident);
  add("PATCH", "/admin/v1/status/incidents/:id", patchStatusIncident);
  add("POST", "/admin/v1/status/incidents/:id/updates", addStatusIncidentUpdate);
  add("GET", "/admin/v1/status/maintenance", listStatusMaintenance);
  add("POST", "/admin/v1/status/maintenance", createStatusMaintenance);
  add("GET", "/admin/v1/status/maintenance/:id", getStatusMaintenance);
  add("PATCH", "/admin/v1/status/maintenance/:id", patchStatusMaintenance);
  add("POST", "/admin/v1/status/maintenance/:id/cancel", cancelStatusMaintenance);
  add("GET", "/admin/v1/status/activity", listStatusActivity);
  add("POST", "/admin/v1/orgs/:org/webhooks", createWebhook);
  add("GET", "/admin/v1/orgs/:org/webhooks", listOrgWebhooks);
  add("DELETE", "/admin/v1/orgs/:org/webhooks/:id", removeWebhook);
  add("GET", "/admin/v1/orgs/:org/webhooks/:id/deliveries", webhookDeliveries);
  add("POST", "/admin/v1/orgs/:org/assignments/:domain/:finding_key/notes", addNote);
  add("GET", "/admin/v1/orgs/:org/assignments/:domain/:finding_key/notes", listNotes);
  add("POST", "/admin/v1/orgs/:org/siem", createDestination);
  add("GET", "/admin/v1/orgs/:org/siem", listOrgDestinations);
  add("GET", "/admin/v1/orgs/:org/siem/:id", getDestination);
  add("DELETE", "/admin/v1/orgs/:org/siem/:id", removeDestination);
  add("POST", "/admin/v1/orgs/:org/siem/:id/test", testDestination);
  add("GET", "/admin/v1/orgs/:org/siem/:id/dead-letters", listDestinationDeadLetters);
  add("POST", "/admin/v1/orgs/:org/siem/:id/dead-letters/retry", retryDestinationDeadLetters);
}
