import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import { getClock, hasTestClock, moveClock } from "../system.js";
import { ADMIN_BASE, guarded, type AdminHandler, type AdminMethod, type AdminRoute } from "./common.js";
import { listContentRoute, listSecretsRoute, putContent, putSecret, removeContent, removeSecret } from "./content.js";
import { addDomain, listDomainsRoute, verifyDomain } from "./domains.js";
import { decideInstallation, listInstallations } from "./installations.js";
import { createKey, getKey, keyTransition, listKeys, patchKey, rotateKey } from "./keys.js";
import { getMe } from "./me.js";
import { changeMemberRole, removeMember } from "./members.js";
import { addNote, listNotes } from "./notes.js";
import { listOrgInstallations } from "./org-installations.js";
import { addMember, createOrg, getOrg, listMembersRoute, listOrgsRoute, patchOrg } from "./orgs.js";
import { ANYONE, keyRoute, OPERATOR, orgRoute, type Reach } from "./reach.js";
import { acceptRisk, listRisks, releaseRisk } from "./risks.js";
import { runScan, showScan } from "./scans.js";
import {
  createDestination,
  getDestination,
  listDestinationDeadLetters,
  listOrgDestinations,
  removeDestination,
  retryDestinationDeadLetters,
  testDestination,
} from "./siem.js";
import {
  cancelStatusMaintenance,
  createStatusMaintenance,
  getStatusMaintenance,
  listStatusMaintenance,
  patchStatusMaintenance,
} from "./status-maintenance.js";
import {
  addStatusIncidentUpdate,
  createStatusIncident,
  getStatusIncident,
  listStatusActivity,
  listStatusIncidents,
  listStatusServices,
  patchStatusIncident,
  putService,
} from "./status.js";
import { createToken, listTokens, removeToken } from "./tokens.js";
import { keyUsage, orgUsage } from "./usage.js";
import { createWebhook, listOrgWebhooks, removeWebhook, webhookDeliveries } from "./webhooks.js";

const route = (
  method: AdminMethod,
  path: string,
  reach: Reach,
  handler: AdminHandler,
  extra: Pick<AdminRoute, "available"> = {},
): AdminRoute => ({
  method,
  path,
  reach,
  handler,
  ...extra,
});

// Who may do what (operator-api.md section 5): a `member` reads everything of its
// organization and changes assignments and notes; an `admin` also manages keys, domains,
// content, secrets, risks, SIEM destinations and webhooks; an `owner` also manages members,
// tokens and the organization's settings. Every read is `member`.
const READ = "member";
const ASSIGNMENTS = "member";
const MANAGE = "admin";
const OWN = "owner";

/**
 * The admin API (operator-api.md sections 2, 4 and 5), every route with its reach. Paths
 * are under /admin/v1. Nothing else registers an admin route (app.ts refuses to).
 */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  route("GET", "/me", ANYONE, getMe),
  route("GET", "/clock", OPERATOR, getClock, { available: hasTestClock }),
  route("POST", "/clock", OPERATOR, moveClock, { available: hasTestClock }),

  route("POST", "/orgs", OPERATOR, createOrg),
  route("GET", "/orgs", OPERATOR, listOrgsRoute),
  route("GET", "/orgs/:org", orgRoute(READ), getOrg),
  route("PATCH", "/orgs/:org", orgRoute(OWN), patchOrg),
  route("POST", "/orgs/:org/members", orgRoute(OWN, { mints: true }), addMember),
  route("GET", "/orgs/:org/members", orgRoute(READ), listMembersRoute),
  // Changing a role or removing a member is the owner's, and never a token's (`mints`): a
  // write token that could make an owner would mint through them.
  route("PATCH", "/orgs/:org/members/:id", orgRoute(OWN, { owned: "member", mints: true }), changeMemberRole),
  route("DELETE", "/orgs/:org/members/:id", orgRoute(OWN, { owned: "member", mints: true }), removeMember),
  route("POST", "/orgs/:org/tokens", orgRoute(OWN, { mints: true }), createToken),
  route("GET", "/orgs/:org/tokens", orgRoute(READ), listTokens),
  route("DELETE", "/orgs/:org/tokens/:id", orgRoute(OWN, { owned: "token" }), removeToken),

  route("POST", "/orgs/:org/domains", orgRoute(MANAGE), addDomain),
  route("GET", "/orgs/:org/domains", orgRoute(READ), listDomainsRoute),
  route("POST", "/orgs/:org/domains/:domain/verify", orgRoute(MANAGE), verifyDomain),

  route("POST", "/orgs/:org/keys", orgRoute(MANAGE), createKey),
  route("GET", "/orgs/:org/keys", orgRoute(READ), listKeys),
  route("GET", "/keys/:id", keyRoute(READ), getKey),
  route("PATCH", "/keys/:id", keyRoute(MANAGE), patchKey),
  route("POST", "/keys/:id/suspend", keyRoute(MANAGE), keyTransition("suspend")),
  route("POST", "/keys/:id/resume", keyRoute(MANAGE), keyTransition("resume")),
  route("POST", "/keys/:id/revoke", keyRoute(MANAGE), keyTransition("revoke")),
  route("POST", "/keys/:id/rotate", keyRoute(MANAGE), rotateKey),
  route("GET", "/keys/:id/installations", keyRoute(READ), listInstallations),
  route("POST", "/keys/:id/installations/:install/approve", keyRoute(MANAGE), decideInstallation("approved")),
  route("POST", "/keys/:id/installations/:install/block", keyRoute(MANAGE), decideInstallation("blocked")),
  route("GET", "/keys/:id/usage", keyRoute(READ), keyUsage),
  route("GET", "/orgs/:org/usage", orgRoute(READ), orgUsage),
  route("GET", "/orgs/:org/installations", orgRoute(READ), listOrgInstallations),

  route("GET", "/orgs/:org/content", orgRoute(READ), listContentRoute),
  route("PUT", "/orgs/:org/content/:content_key", orgRoute(MANAGE), putContent),
  route("DELETE", "/orgs/:org/content/:content_key", orgRoute(MANAGE), removeContent),
  route("GET", "/orgs/:org/secrets", orgRoute(READ), listSecretsRoute),
  route("PUT", "/orgs/:org/secrets/:name", orgRoute(MANAGE), putSecret),
  route("DELETE", "/orgs/:org/secrets/:name", orgRoute(MANAGE), removeSecret),
  route("GET", "/orgs/:org/risks", orgRoute(READ), listRisks),
  route("POST", "/orgs/:org/risks", orgRoute(MANAGE), acceptRisk),
  route("DELETE", "/orgs/:org/risks/:domain/:finding_key", orgRoute(MANAGE), releaseRisk),
  route("POST", "/orgs/:org/scans", orgRoute(MANAGE), runScan),
  route("GET", "/orgs/:org/scans/:domain", orgRoute(READ), showScan),

  route("POST", "/orgs/:org/webhooks", orgRoute(MANAGE), createWebhook),
  route("GET", "/orgs/:org/webhooks", orgRoute(READ), listOrgWebhooks),
  route("DELETE", "/orgs/:org/webhooks/:id", orgRoute(MANAGE, { owned: "webhook" }), removeWebhook),
  route("GET", "/orgs/:org/webhooks/:id/deliveries", orgRoute(READ, { owned: "webhook" }), webhookDeliveries),
  route("POST", "/orgs/:org/assignments/:domain/:finding_key/notes", orgRoute(ASSIGNMENTS), addNote),
  route("GET", "/orgs/:org/assignments/:domain/:finding_key/notes", orgRoute(READ), listNotes),
  route("POST", "/orgs/:org/siem", orgRoute(MANAGE), createDestination),
  route("GET", "/orgs/:org/siem", orgRoute(READ), listOrgDestinations),
  route("GET", "/orgs/:org/siem/:id", orgRoute(READ, { owned: "siem" }), getDestination),
  route("DELETE", "/orgs/:org/siem/:id", orgRoute(MANAGE, { owned: "siem" }), removeDestination),
  route("POST", "/orgs/:org/siem/:id/test", orgRoute(MANAGE, { owned: "siem" }), testDestination),
  route("GET", "/orgs/:org/siem/:id/dead-letters", orgRoute(READ, { owned: "siem" }), listDestinationDeadLetters),
  route("POST", "/orgs/:org/siem/:id/dead-letters/retry", orgRoute(MANAGE, { owned: "siem" }), retryDestinationDeadLetters),

  route("GET", "/status/services", OPERATOR, listStatusServices),
  route("PUT", "/status/services/:service", OPERATOR, putService),
  route("GET", "/status/incidents", OPERATOR, listStatusIncidents),
  route("POST", "/status/incidents", OPERATOR, createStatusIncident),
  route("GET", "/status/incidents/:id", OPERATOR, getStatusIncident),
  route("PATCH", "/status/incidents/:id", OPERATOR, patchStatusIncident),
  route("POST", "/status/incidents/:id/updates", OPERATOR, addStatusIncidentUpdate),
  route("GET", "/status/maintenance", OPERATOR, listStatusMaintenance),
  route("POST", "/status/maintenance", OPERATOR, createStatusMaintenance),
  route("GET", "/status/maintenance/:id", OPERATOR, getStatusMaintenance),
  route("PATCH", "/status/maintenance/:id", OPERATOR, patchStatusMaintenance),
  route("POST", "/status/maintenance/:id/cancel", OPERATOR, cancelStatusMaintenance),
  route("GET", "/status/activity", OPERATOR, listStatusActivity),
];

/** Registers every admin route behind the one wrapper (common.ts `guarded`). */
export function registerAdminRoutes(
  add: (method: string, path: string, handler: Handler<IngressDeps>) => void,
  routes: readonly AdminRoute[] = ADMIN_ROUTES,
): void {
  for (const r of routes) add(r.method, `${ADMIN_BASE}${r.path}`, guarded(r));
}
