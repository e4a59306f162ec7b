import {
  admitSiemTest,
  SIEM_GROUP,
  SIEM_TEST_STREAM,
  SIEM_TESTS_OUTSTANDING,
  siemTestDone,
  siemTestReplySchema,
  destinationStreamName,
  countDestinations,
  deleteDestination,
  findDestination,
  insertDestination,
  listDestinations,
  SIEM_KINDS,
  type SiemDestinationRow,
  type SiemKind,
  type SiemTestRequest,
  tokenAad,
  parseTarget,
  siemPutBack,
} from "../../shared/events/index.js";
import { literalRefusal, outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import { listDeadLetters, retryAllDeadLetters, retryDeadLetters } from "../../shared/platform/streams/dead-letters.js";
import { streamStats } from "../../shared/platform/streams/stats.js";
import { recordActivity, findOrg } from "../../shared/accounts/index.js";
import { seal } from "../../shared/platform/crypto/seal.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { ask } from "../ask.js";
import type { IngressDeps } from "../deps.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, validator, type AdminHandler } from "./common.js";

/** How long "send test event" waits for a pusher to try the destination. */
export const TEST_TIMEOUT_MS = 20_000;

export const destinationBody = validator<{ kind: SiemKind; url: string; token?: string | null; index?: string | null }>({
  type: "object",
  required: ["kind", "url"],
  properties: {
    kind: { type: "string", enum: SIEM_KINDS },
    url: { type: "string", minLength: 1, maxLength: 2048 },
    token: { anyOf: [{ type: "string", minLength: 1, maxLength: 4096 }, { type: "null" }] },
    index: { anyOf: [{ type: "string", pattern: "^[a-z0-9][a-z0-9_.+-]{0,254}$" }, { type: "null" }] },
  },
  additionalProperties: false,
});

export const retryBody = validator<{ ids?: string[] }>({
  type: "object",
  properties: { ids: { type: "array", maxItems: 1000, items: { type: "string", pattern: "^\\d{1,20}-\\d{1,20}$" } } },
  additionalProperties: false,
});

const streamOf = (deps: IngressDeps, id: number) => deps.keys.stream(destinationStreamName(id));

function destinationView(row: SiemDestinationRow) {
  return {
    id: row.id,
    kind: row.kind,
    url: row.url,
    index: row.index_name,
    has_token: row.token_sealed !== null,
    created_at: iso(row.created_at),
  };
}

/** Delivery state: the counters from PostgreSQL, `pending` from the destination's stream (not yet delivered). */
async function stateView(deps: IngressDeps, row: SiemDestinationRow) {
  const stats = await streamStats(deps.redis, streamOf(deps, row.id), deps.keys);
  const group = stats.groups.find((g) => g.group === SIEM_GROUP);
  const pending = group ? group.lag + group.pending : stats.length;
  return {
    ...destinationView(row),
    delivered: row.delivered,
    pending,
    failed: row.failed,
    dead_letters: stats.deadLetters ?? 0,
    last_error: row.last_error,
    last_error_at: iso(row.last_error_at),
    last_delivered_at: iso(row.last_delivered_at),
    last_event_id: row.last_event_id,
  };
}

/** Tell the pushers: the fan-out reloads on the version, the delivery loops on the message. */
async function announce(deps: IngressDeps): Promise<void> {
  await deps.redis.incr(deps.keys.siemVersion());
  await deps.redis.publish(deps.keys.siemChanged(), "1");
}

async function owned(deps: IngressDeps, params: Record<string, string>): Promise<SiemDestinationRow | null> {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null) return null;
  return findDestination(deps.db, orgId, id);
}

export const createDestination: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const input = check(destinationBody, body);
  if ("reply" in input) return input.reply;
  const { kind, url, token, index } = input.value;
  const target = parseTarget(kind, url);
  if (!target.ok) return refuseField("bad_url", target.detail);
  // The SSRF guard proper runs on every connection (after DNS); a literal address is judged now.
  const refused = literalRefusal(target.target.host, outboundPolicyOf("siem", deps.config));
  if (refused !== null) return refuseField("bad_url", refused);
  const now = deps.clock.now();
  const row = await transaction(deps.db, async (tx) => {
    if (await atOrgLimit(tx, orgId, "siem_destinations", () => countDestinations(tx, orgId))) return null;
    const saved = await insertDestination(tx, {
      orgId,
      kind,
      url,
      indexName: index ?? null,
      nowMs: now,
      sealToken: token ? (id) => seal(deps.masterSecret, token, tokenAad(orgId, id)) : null,
    });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "siem",
      action: `SIEM destination ${saved.id} (${kind}) added`,
      actionCode: "siem.destination_added",
      detail: { id: saved.id, kind, url },
    });
    return saved;
  });
  if (row === null) return limitReached("siem_destinations");
  await announce(deps);
  return ok({ destination: destinationView(row) }, 201);
};

export const listOrgDestinations: AdminHandler = async (request, deps, params) => {
  const orgId = idParam(params, "org");
  if (orgId === null || !(await findOrg(deps.db, orgId))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listDestinations(deps.db, orgId, paging);
  return ok({ destinations: await Promise.all(rows.map((row) => stateView(deps, row))), ...pageFields(paging, total) });
};

export const getDestination: AdminHandler = async (_request, deps, params) => {
  const row = await owned(deps, params);
  if (!row) return refuse("not_found");
  return ok({ destination: await stateView(deps, row) });
};

export const removeDestination: AdminHandler = async (_request, deps, params, _body, caller) => {
  const row = await owned(deps, params);
  if (!row) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    if (!(await deleteDestination(tx, row.org_id, row.id))) return false;
    await recordActivity(tx, {
      orgId: row.org_id,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "siem",
      action: `SIEM destination ${row.id} (${row.kind}) removed`,
      actionCode: "siem.destination_removed",
      detail: { id: row.id, kind: row.kind },
    });
    return true;
  });
  if (!removed) return refuse("not_found");
  await announce(deps);
  return ok({ deleted: { id: row.id } });
};

export const testDestination: AdminHandler = async (_request, deps, params) => {
  const row = await owned(deps, params);
  if (!row) return refuse("not_found");
  // Given back by the pusher that handles it, not when this wait ends: the request outlives a 504.
  if (!(await admitSiemTest(deps.redis, deps.keys, row.org_id))) return refuse("test_rate_limited", { limit: SIEM_TESTS_OUTSTANDING });
  let answer: Awaited<ReturnType<typeof ask<typeof siemTestReplySchema>>>;
  try {
    answer = await ask(deps, {
      stream: SIEM_TEST_STREAM,
      message: { destination_id: row.id, org_id: row.org_id } satisfies SiemTestRequest,
      replySchema: siemTestReplySchema,
      timeoutMs: TEST_TIMEOUT_MS,
      refusal: { extra: { detail: "no SIEM pusher answered (is the siem actor running?)" } },
    });
  } catch (error) {
    // Not published (Redis failed) or not readable: no pusher may ever give this one back.
    // Giving back one the pusher did handle only lets the organization one test early.
    await siemTestDone(deps.redis, deps.keys, row.org_id).catch(() => {});
    throw error;
  }
  if (!answer.ok) return answer.refusal;
  const reply = answer.reply;
  if (!reply.ok) return refuse("delivery_failed", { error: reply.error });
  return ok({ test: { delivered: true, event_id: reply.event_id } });
};

export const listDestinationDeadLetters: AdminHandler = async (request, deps, params) => {
  const row = await owned(deps, params);
  if (!row) return refuse("not_found");
  const after = new URLSearchParams(request.query).get("after") ?? undefined;
  if (after !== undefined && !/^\d{1,20}-\d{1,20}$/.test(after)) return refuseField("bad_after");
  const letters = await listDeadLetters(deps.redis, deps.keys, streamOf(deps, row.id), { count: 100, after });
  return ok({
    dead_letters: letters.map((l) => ({
      dead_id: l.deadId,
      reason: l.reason,
      error: l.error,
      attempts: l.attempts,
      at: l.at > 0 ? iso(new Date(l.at)) : null,
      event: JSON.parse(l.data) as unknown,
    })),
  });
};

/** Body `{ids: [dead ids]}` retries those; no ids retries every dead letter of the destination. */
export const retryDestinationDeadLetters: AdminHandler = async (_request, deps, params, body) => {
  const row = await owned(deps, params);
  if (!row) return refuse("not_found");
  const input = check(retryBody, body);
  if ("reply" in input) return input.reply;
  const stream = streamOf(deps, row.id);
  const ids = input.value.ids;
  // Back through the fan-out's script: a replay finds the letter if the cap trims it unread.
  const options = { putBack: siemPutBack(deps.redis, deps.keys) };
  const retried =
    ids === undefined
      ? await retryAllDeadLetters(deps.redis, deps.keys, stream, options)
      : await retryDeadLetters(deps.redis, deps.keys, stream, ids, options);
  return ok({ retried: retried.length, not_found: (ids ?? []).filter((id) => !retried.some((r) => r.deadId === id)) });
};
