import { findOrg } from "../../shared/accounts/index.js";
import { INSTALLATION_STATUSES, listInstallationsOfOrg } from "../../shared/verify/index.js";
import { isOneOf } from "../../shared/platform/one-of.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { idParam, iso, type AdminHandler } from "./common.js";

/**
 * GET /orgs/:org/installations: the installations of the organization's keys that are not
 * revoked, most recently seen first, each with its key; filters `status`. From PostgreSQL
 * alone: an installation only Redis has seen yet is listed once the usage actor writes it
 * (a key's own list, GET /keys/:id/installations, also shows those).
 */
export const listOrgInstallations: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  const org = orgId === null ? null : await findOrg(deps.db, orgId);
  if (!org) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const status = new URLSearchParams(request.query).get("status") || undefined;
  if (status !== undefined && !isOneOf(INSTALLATION_STATUSES, status))
    return refuseField("bad_status", `status must be one of ${INSTALLATION_STATUSES.join(", ")}`);
  const { total, rows } = await listInstallationsOfOrg(deps.db, org.id, { ...paging, status });
  return ok({
    installations: rows.map((row) => ({
      key_id: row.key_id,
      key_name: row.key_name,
      install: row.install,
      status: row.status,
      first_seen_at: iso(row.first_seen_at),
      last_seen_at: iso(row.last_seen_at),
    })),
    ...pageFields(paging, total),
  });
};
