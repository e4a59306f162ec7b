import { randomBytes } from "node:crypto";
import { recordActivity, findOrg } from "../../shared/accounts/index.js";
import {
  countDomains,
  findDomain,
  insertDomain,
  listDomains,
  markVerified,
  txtRecord,
  type DomainRow,
  lookupTxt,
} from "../../shared/scans/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, validator, type AdminHandler } from "./common.js";

export const domainBody = validator<{ domain: string; verified?: boolean }>({
  type: "object",
  required: ["domain"],
  properties: { domain: { type: "string", format: "domain" }, verified: { type: "boolean" } },
  additionalProperties: false,
});

function domainView(row: DomainRow) {
  return {
    id: row.id,
    name: row.name,
    verified: row.verified,
    verified_at: iso(row.verified_at),
    verification_token: row.verification_token,
    txt_record: txtRecord(row),
    created_at: iso(row.created_at),
  };
}

/** GET /orgs/:org/domains: each domain with `verified` and the TXT record to publish, newest first. */
export const listDomainsRoute: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listDomains(deps.db, orgId, paging);
  return ok({ domains: rows.map(domainView), ...pageFields(paging, total) });
};

export const addDomain: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const input = check(domainBody, body);
  if ("reply" in input) return input.reply;
  // A manual verification is the operator's (operator-api.md): anyone else proves ownership
  // with the TXT record, or could claim any domain and scan it as their own.
  if (input.value.verified === true && caller.principal.kind !== "operator") return refuse("forbidden");
  const name = normalizeDomain(input.value.domain);
  if (!name) return refuseField("bad_domain");
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    // A domain the organization has is a conflict, full or not.
    if (await atOrgLimit(tx, orgId, "domains", () => countDomains(tx, orgId))) return (await findDomain(tx, orgId, name)) ? null : "limit";
    const inserted = await insertDomain(tx, {
      orgId,
      name,
      token: randomBytes(16).toString("hex"),
      verified: input.value.verified === true,
      nowMs: now,
    });
    if (inserted) {
      await recordActivity(tx, {
        orgId,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "trust",
        domain: name,
        action: inserted.verified ? `Domain ${name} added and verified by an operator` : `Domain ${name} added`,
        actionCode: inserted.verified ? "domain.verified" : "domain.added",
        detail: { manual: inserted.verified },
      });
    }
    return inserted;
  });
  if (row === "limit") return limitReached("domains");
  if (!row) return refuse("conflict", { detail: "the organization already has this domain" });
  if (row.verified) await deps.projector.orgChanged(orgId);
  return ok({ domain: domainView(row) }, 201);
};

export const verifyDomain: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const name = normalizeDomain(params.domain ?? "");
  const row = orgId === null || !name ? null : await findDomain(deps.db, orgId, name);
  if (!row || orgId === null) return refuse("not_found");
  if (row.verified) return ok({ domain: domainView(row) });
  const expected = txtRecord(row);
  let records: string[];
  try {
    records = await lookupTxt(deps.config.dnsResolver, expected.name);
  } catch (error) {
    deps.logger.info({ err: error, domain: row.name }, "verification lookup failed");
    return ok({ domain: domainView(row), checked: { found: [], error: "lookup_failed" } });
  }
  if (!records.some((r) => r.trim() === expected.value)) {
    return ok({ domain: domainView(row), checked: { found: records.slice(0, 10) } });
  }
  const now = deps.clock.now();
  const verified = await transaction(deps.db, async (tx) => {
    const updated = await markVerified(tx, row.id, "dns", now);
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "trust",
      domain: row.name,
      action: `Domain ${row.name} verified by DNS TXT record`,
      actionCode: "domain.verified",
      detail: { method: "dns_txt" },
    });
    return updated;
  });
  await deps.projector.orgChanged(orgId);
  return ok({ domain: domainView(verified) });
};
