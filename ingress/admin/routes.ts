import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import { putContent, putSecret, removeContent, removeSecret } from "./content.js";
import { addDomain, verifyDomain } from "./domains.js";
import { addMember, createOrg, getOrg, patchOrg } from "./orgs.js";
import { decideInstallation, listInstallations } from "./installations.js";
import { createKey, getKey, keyTransition, patchKey, rotateKey } from "./keys.js";
import { acceptRisk, releaseRisk } from "./risks.js";
import { keyUsage } from "./usage.js";

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
}
