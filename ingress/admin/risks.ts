import { recordActivity } from "../../shared/activity.js";
import { findDomain } from "../../shared/db/domains.js";
import { transaction } from "../../shared/db/pool.js";
import { insertEvent, type AckRow } from "../../shared/db/scans.js";
import { normalizeDomain } from "../../shared/validation.js";
import { ok, refuse, refuseField } from "../reply.js";
import { ADMIN_ACTOR, admin, check, idParam, iso, parseTime, validator } from "./common.js";

export const FINDING_KEY = /^[a-z0-9_-]{1,32}:[a-z0-9_.-]{1,64}$/;

const riskBody = validator<{ domain: string; finding_key: string; note?: string; expires_at?: string | null }>({
  type: "object",
  required: ["domain", "finding_key"],
  properties: {
    domain: { type: "string", format: "domain" },
    finding_key: { type: "string", pattern: FINDING_KEY.source },
    note: { type: "string", maxLength: 2000 },
    expires_at: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
  },
  additionalProperties: false,
});

export function acknowledgementView(row: AckRow, nowMs: number) {
  const expired = row.expires_at !== null && row.expires_at.getTime() <= nowMs;
  return { note: row.note, acked_at: iso(row.acked_at), expires_at: iso(row.expires_at), expired };
}

/** Accepts a risk until expires_at; an existing acceptance of the same finding is replaced. */
export const acceptRisk = admin(async (_request, deps, params, body) => {
  const orgId = idParam(params, "org");
  if (orgId === null) return refuse("not_found");
  const input = check(riskBody, body);
  if ("reply" in input) return input.reply;
  const domain = normalizeDomain(input.value.domain) ?? "";
  const owned = await findDomain(deps.db, orgId, domain);
  if (!owned) return refuse("not_found", { detail: "the organization has no such domain" });
  const now = deps.clock.now();
  const expiresMs = input.value.expires_at ? parseTime(input.value.expires_at) : null;
  if (expiresMs !== null && expiresMs <= now) return refuseField("bad_expires_at", "expires_at must be in the future");
  const row = await transaction(deps.db, async (tx) => {
    // Two acceptances of one finding at once would both find nothing to release and
    // collide on the one-current-acceptance index: the domain's row lock queues them.
    await tx.query("SELECT 1 FROM domains WHERE id = $1 FOR UPDATE", [owned.id]);
    await tx.query(
      `UPDATE acknowledgements SET released_at = to_timestamp($4 / 1000.0)
       WHERE org_id = $1 AND domain = $2 AND finding_key = $3 AND released_at IS NULL`,
      [orgId, domain, input.value.finding_key, now],
    );
    const { rows } = await tx.query<AckRow>(
      `INSERT INTO acknowledgements (org_id, domain, finding_key, note, acked_by, acked_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), CASE WHEN $7::float8 IS NULL THEN NULL ELSE to_timestamp($7 / 1000.0) END)
       RETURNING *`,
      [orgId, domain, input.value.finding_key, input.value.note ?? "", ADMIN_ACTOR, now, expiresMs],
    );
    await insertEvent(tx, {
      orgId, type: "risk.accepted", timeMs: now, domain,
      payload: { finding_key: input.value.finding_key, note: rows[0].note, expires_at: iso(rows[0].expires_at), by: ADMIN_ACTOR },
    });
    await recordActivity(tx, {
      orgId, atMs: now, who: ADMIN_ACTOR, via: "admin", group: "risks", domain,
      action: `Risk accepted for ${input.value.finding_key}`, actionCode: "risk.accepted",
      detail: { finding_key: input.value.finding_key, expires_at: iso(rows[0].expires_at) },
    });
    return rows[0];
  });
  return ok({ acknowledgement: { domain, finding_key: row.finding_key, ...acknowledgementView(row, now) } }, 201);
});

export const releaseRisk = admin(async (_request, deps, params) => {
  const orgId = idParam(params, "org");
  const domain = normalizeDomain(params.domain ?? "");
  const findingKey = params.finding_key ?? "";
  if (orgId === null || !domain || !FINDING_KEY.test(findingKey)) return refuse("not_found");
  const now = deps.clock.now();
  const released = await transaction(deps.db, async (tx) => {
    const { rows } = await tx.query<AckRow>(
      `UPDATE acknowledgements SET released_at = to_timestamp($4 / 1000.0)
       WHERE org_id = $1 AND domain = $2 AND finding_key = $3 AND released_at IS NULL RETURNING *`,
      [orgId, domain, findingKey, now],
    );
    if (!rows[0]) return null;
    await insertEvent(tx, { orgId, type: "risk.unaccepted", timeMs: now, domain, payload: { finding_key: findingKey, by: ADMIN_ACTOR } });
    await recordActivity(tx, {
      orgId, atMs: now, who: ADMIN_ACTOR, via: "admin", group: "risks", domain,
      action: `Risk acceptance released for ${findingKey}`, actionCode: "risk.released", detail: { finding_key: findingKey },
    });
    return rows[0];
  });
  if (!released) return refuse("not_found");
  return ok({ released: { domain, finding_key: findingKey, released_at: iso(released.released_at) } });
});
