import { verifiedDomains } from "../../shared/scans/index.js";
import { findOrg } from "../../shared/accounts/index.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { refuse } from "../reply.js";
import type { HttpReply } from "../types.js";
import { answerScan, SCAN_TIMEOUT_MS } from "../routes/scan.js";
import { check, idParam, validator, type AdminHandler } from "./common.js";

/**
 * Scans through the admin API (the CLI's `scan run|show`): the same answers as scan.php
 * for a verified domain of the organization, the same budget of fresh scans per hour
 * (`scan_rate_limited`), without a key.
 */

export const runBody = validator<{ domain: string }>({
  type: "object",
  required: ["domain"],
  properties: { domain: { type: "string", format: "domain" } },
  additionalProperties: false,
});

async function scanOf(deps: IngressDeps, orgIdRaw: number | null, rawDomain: string, method: "GET" | "POST"): Promise<HttpReply> {
  if (orgIdRaw === null || !(await findOrg(deps.db, orgIdRaw))) return refuse("not_found");
  const domain = normalizeDomain(rawDomain);
  const verified = await verifiedDomains(deps.db, orgIdRaw);
  if (!domain || !verified.includes(domain)) return refuse("domain_not_verified");
  return answerScan(deps, method, {}, { orgId: orgIdRaw, domain, verifiedDomains: verified }, SCAN_TIMEOUT_MS);
}

/** POST /orgs/:org/scans `{domain}`: a fresh scan now (waits for the scanner, up to 25 s). */
export const runScan: AdminHandler = async (_request, deps, params, body) => {
  const orgId = idParam(params, "org");
  if (orgId === null) return refuse("not_found");
  const input = check(runBody, body);
  if ("reply" in input) return input.reply;
  return scanOf(deps, orgId, input.value.domain, "POST");
};

/** GET /orgs/:org/scans/:domain: the latest stored result (404 `no_scan` before the first). */
export const showScan: AdminHandler = (_request, deps, params) => scanOf(deps, idParam(params, "org"), params.domain ?? "", "GET");
