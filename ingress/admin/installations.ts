import { recordActivity } from "../../shared/accounts/index.js";
import { findKey, gracePartnersOf, installationsPageOf, setInstallationStatus, type InstallationRow } from "../../shared/verify/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { isStorableText } from "../../shared/platform/validation.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { idParam, iso, type AdminHandler } from "./common.js";

function view(row: InstallationRow) {
  return { install: row.install, status: row.status, first_seen_at: iso(row.first_seen_at), last_seen_at: iso(row.last_seen_at) };
}

/**
 * GET /keys/:id/installations: the key's installations, newest first, paged; those only Redis
 * has seen yet (the usage actor has not written them down) first of all.
 */
export const listInstallations: AdminHandler = async (request, deps, params) => {
  const id = idParam(params, "id");
  const key = id === null ? null : await findKey(deps.db, id);
  if (!key) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const live = await deps.redis.hgetall(deps.keys.installations(key.org_id, key.id));
  const { total, rows } = await installationsPageOf(deps.db, key.id, live, deps.clock.now(), paging);
  return ok({ installations: rows.map(view), ...pageFields(paging, total) });
};

export function decideInstallation(decision: "approved" | "blocked"): AdminHandler {
  return async (_request, deps, params, _body, caller) => {
    const id = idParam(params, "id");
    const key = id === null ? null : await findKey(deps.db, id);
    if (!key || key.status === "revoked") return refuse("not_found");
    const install = params.install ?? "";
    if (install.length === 0 || install.length > 200 || !isStorableText(install)) return refuseField("bad_install");
    const now = deps.clock.now();
    // While a rotation's grace runs, the old key and the key replacing it honour the owner's decisions alike.
    const partners = await gracePartnersOf(deps.db, key.id, now);
    const row = await transaction(deps.db, async (tx) => {
      const updated = await setInstallationStatus(tx, key.id, install, decision, now);
      for (const partner of partners) await setInstallationStatus(tx, partner.id, install, decision, now);
      await recordActivity(tx, {
        orgId: key.org_id,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "trust",
        domain: key.domain,
        action: `Installation ${install} of key "${key.name}" ${decision}`,
        actionCode: decision === "approved" ? "installation.approved" : "installation.blocked",
        detail: { key_id: key.id, install },
      });
      return updated;
    });
    // Projected like any key change: owed (projection_pending) until Redis has it, and read
    // from PostgreSQL under the key's lock, so of two decisions in a row the later one stands.
    await deps.projector.keyChanged(key.id, { installations: true });
    for (const partner of partners) await deps.projector.keyChanged(partner.id, { installations: true });
    return ok({ installation: view(row) });
  };
}
