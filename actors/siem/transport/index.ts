import { createHash } from "node:crypto";
import type { SyslogEvent } from "../../../shared/events/index.js";
import type { LoadedDestination } from "../messages.js";
import { DeliveryError, type PushNetwork } from "./guard.js";
import { expectSuccess, postGuarded } from "./http-post.js";
import { sendSyslog } from "./syslog-tcp.js";

/**
 * One batch to one destination, per kind. Every kind carries the event's fixed id, so a
 * collector (or whoever reads it) can tell a retried event from a new one:
 * - splunk_hec: HEC JSON events (`Authorization: Splunk <token>`), the id in `event.id`
 *   and in the indexed field `event_id`;
 * - elastic_bulk: `create` actions with `_id` = event id; 409 (already stored) is success;
 * - syslog_tcp: RFC 5424 lines, the id in the structured data (`event_id`) and the MSG;
 * - http: a JSON array, `Idempotency-Key` = SHA-256 of the destination and the batch's ids.
 */
export const DEFAULT_INDEX = "gateway-events";
export const SOURCE = "access-gateway";

export async function sendBatch(destination: LoadedDestination, events: readonly SyslogEvent[], network: PushNetwork): Promise<void> {
  switch (destination.kind) {
    case "splunk_hec":
      return sendHec(destination, events, network);
    case "elastic_bulk":
      return sendBulk(destination, events, network);
    case "syslog_tcp":
      return sendSyslog(destination.target, events, network);
    case "http":
      return sendHttp(destination, events, network);
  }
}

function epochSeconds(time: string): number {
  return Date.parse(time) / 1000;
}

async function sendHec(destination: LoadedDestination, events: readonly SyslogEvent[], network: PushNetwork): Promise<void> {
  const body = events
    .map((event) =>
      JSON.stringify({
        time: epochSeconds(event.time),
        host: network.hostname,
        source: SOURCE,
        sourcetype: "_json",
        ...(destination.index ? { index: destination.index } : {}),
        event,
        fields: { event_id: String(event.id), event_type: event.type },
      }),
    )
    .join("\n");
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (destination.token !== null) headers.authorization = `Splunk ${destination.token}`;
  expectSuccess(await postGuarded(destination.target, headers, body, network), "Splunk HEC");
}

interface BulkItem {
  create?: { status?: number; error?: { type?: string; reason?: string } };
}

async function sendBulk(destination: LoadedDestination, events: readonly SyslogEvent[], network: PushNetwork): Promise<void> {
  const index = destination.index ?? DEFAULT_INDEX;
  const body = events
    .map(
      (event) =>
        `${JSON.stringify({ create: { _index: index, _id: String(event.id) } })}\n${JSON.stringify({ ...event, "@timestamp": event.time })}\n`,
    )
    .join("");
  const headers: Record<string, string> = { "content-type": "application/x-ndjson" };
  if (destination.token !== null) headers.authorization = `ApiKey ${destination.token}`;
  const answer = await postGuarded(destination.target, headers, body, network);
  expectSuccess(answer, "Elasticsearch _bulk");
  let parsed: { errors?: boolean; items?: BulkItem[] };
  try {
    parsed = JSON.parse(answer.body) as typeof parsed;
  } catch {
    throw new DeliveryError("Elasticsearch _bulk answered something that is not JSON");
  }
  if (!parsed.errors) return;
  // 409 version_conflict on `create`: that _id is stored already (an earlier try got through).
  const failed = (parsed.items ?? []).filter((item) => {
    const status = item.create?.status ?? 0;
    return !(status >= 200 && status < 300) && status !== 409;
  });
  if (failed.length === 0) return;
  const first = failed[0].create;
  const refused = `Elasticsearch _bulk refused ${failed.length} of ${events.length}: ${first?.status ?? "?"}`;
  const reasons = `${refused} ${first?.error?.type ?? ""} ${first?.error?.reason ?? ""}`.trim();
  // The error's type and reason are the collector's words: quoted only from a public address (expectSuccess).
  throw answer.isPublic ? new DeliveryError(reasons) : new DeliveryError(refused, { logDetail: reasons });
}

export function idempotencyKey(destinationId: number, events: readonly Pick<SyslogEvent, "id">[]): string {
  const ids = events.map((event) => event.id).sort((a, b) => a - b);
  return createHash("sha256")
    .update(`${destinationId}:${ids.join(",")}`)
    .digest("hex");
}

async function sendHttp(destination: LoadedDestination, events: readonly SyslogEvent[], network: PushNetwork): Promise<void> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "idempotency-key": idempotencyKey(destination.id, events),
  };
  if (destination.token !== null) headers.authorization = `Bearer ${destination.token}`;
  expectSuccess(await postGuarded(destination.target, headers, JSON.stringify(events), network), "http collector");
}
