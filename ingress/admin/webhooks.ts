import { literalRefusal, outboundPolicyOf, type OutboundPolicy } from "../../shared/platform/net/address-policy.js";
import { recordActivity, findOrg } from "../../shared/accounts/index.js";
import { seal } from "../../shared/platform/crypto/seal.js";
import { transaction } from "../../shared/platform/db/pool.js";
import {
  countWebhooks,
  deleteWebhook,
  deliveriesOf,
  findWebhook,
  insertWebhook,
  listWebhooks,
  nextWebhookId,
  webhookSecretAad,
} from "../../shared/events/index.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, validator, type AdminHandler } from "./common.js";

export const webhookBody = validator<{ url: string; secret: string }>({
  type: "object",
  required: ["url", "secret"],
  properties: {
    url: { type: "string", minLength: 1, maxLength: 2048 },
    secret: { type: "string", minLength: 16, maxLength: 256 },
  },
  additionalProperties: false,
});

/**
 * An http(s) URL without credentials. A literal address is judged by the SSRF guard now;
 * a name is judged at every delivery, after resolution (a name can change what it points at).
 */
function urlProblem(raw: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "only http and https URLs";
  if (url.username !== "" || url.password !== "") return "no credentials in the URL";
  return literalRefusal(url.hostname, policy);
}

export const createWebhook: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const input = check(webhookBody, body);
  if ("reply" in input) return input.reply;
  const problem = urlProblem(input.value.url, outboundPolicyOf("webhook", deps.config));
  if (problem) return refuseField("bad_url", problem);
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    if (await atOrgLimit(tx, orgId, "webhooks", () => countWebhooks(tx, orgId))) return null;
    const id = await nextWebhookId(tx);
    const sealed = seal(deps.masterSecret, input.value.secret, webhookSecretAad(orgId, id));
    const created = await insertWebhook(tx, { id, orgId, url: input.value.url, secretSealed: sealed, nowMs: now });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "settings",
      action: `Webhook ${id} added`,
      actionCode: "webhook.created",
      detail: { webhook_id: id, url: input.value.url },
    });
    return created;
  });
  if (row === null) return limitReached("webhooks");
  return ok({ webhook: { id: row.id, url: row.url, created_at: iso(row.created_at) } }, 201);
};

export const listOrgWebhooks: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listWebhooks(deps.db, orgId, paging);
  return ok({
    webhooks: rows.map((r) => ({
      id: r.id,
      url: r.url,
      created_at: iso(r.created_at),
      delivered: r.delivered,
      pending: r.pending,
      failed: r.failed,
      last_error: r.last_error,
      last_delivered_at: iso(r.last_delivered_at),
    })),
    ...pageFields(paging, total),
  });
};

export const removeWebhook: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    const row = await deleteWebhook(tx, orgId, id);
    if (!row) return null;
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "settings",
      action: `Webhook ${id} removed`,
      actionCode: "webhook.deleted",
      detail: { webhook_id: id, url: row.url },
    });
    return row;
  });
  if (!removed) return refuse("not_found");
  return ok({ deleted: { id: removed.id, url: removed.url } });
};

/** The delivery log of one webhook, newest first (at most 200). */
export const webhookDeliveries: AdminHandler = async (_request, deps, params) => {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null || !(await findWebhook(deps.db, orgId, id))) return refuse("not_found");
  const rows = await deliveriesOf(deps.db, id, 200);
  return ok({
    deliveries: rows.map((r) => ({
      id: r.id,
      event_id: Number(r.event_id),
      event_type: r.event_type,
      status: r.status,
      attempts: r.attempts,
      last_status: r.last_status,
      last_error: r.last_error,
      next_attempt_at: r.status === "pending" ? iso(r.next_attempt_at) : null,
      created_at: iso(r.created_at),
      delivered_at: iso(r.delivered_at),
    })),
  });
};
