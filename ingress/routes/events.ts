import { eventView, type EventType, feedPage, isEventType, syslogLine } from "../../shared/events/index.js";
import type { Reason } from "../../shared/platform/reasons.js";
import type { IngressDeps } from "../deps.js";
import { readParams, type Params } from "../params.js";
import { refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { passGate } from "./gate.js";
import { eventsParams } from "./schemas.js";

/** interface.md 4.6 and section 8: events per call. */
export const FEED_LIMIT_MAX = 1000;
export const FEED_LIMIT_DEFAULT = 500;
/** Largest cursor: a bigserial id fits in 63 bits. */
const MAX_CURSOR = 9223372036854775807n;

interface FeedQuery {
  since: string;
  limit: number;
  type: EventType | null;
  format: "ndjson" | "syslog";
}

/** An integer parameter as it arrives: digits in a string, or a JSON number. */
function digits(value: unknown): string | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  if (typeof value !== "string" || !/^\d{1,19}$/.test(value.trim())) return null;
  return BigInt(value.trim()).toString();
}

/** The feed's own parameters: a refusal reason, or what to read. */
export function parseFeedQuery(params: Params): { ok: true; query: FeedQuery } | { ok: false; reason: Reason } {
  let since = "0";
  if (params.since !== undefined && params.since !== "") {
    const value = digits(params.since);
    if (value === null || BigInt(value) > MAX_CURSOR) return { ok: false, reason: "bad_since" };
    since = value;
  }
  let limit = FEED_LIMIT_DEFAULT;
  if (params.limit !== undefined && params.limit !== "") {
    const value = digits(params.limit);
    if (value === null || Number(value) < 1 || Number(value) > FEED_LIMIT_MAX) return { ok: false, reason: "bad_limit" };
    limit = Number(value);
  }
  let type: EventType | null = null;
  if (params.type !== undefined && params.type !== "") {
    if (!isEventType(params.type)) return { ok: false, reason: "unknown_type" };
    type = params.type;
  }
  let format: FeedQuery["format"] = "ndjson";
  if (params.format !== undefined && params.format !== "") {
    if (params.format !== "ndjson" && params.format !== "syslog") return { ok: false, reason: "bad_format" };
    format = params.format;
  }
  return { ok: true, query: { since, limit, type, format } };
}

function cursorHeaders(next: string, hasMore: boolean): Record<string, string> {
  return { "x-next-cursor": next, "x-has-more": hasMore ? "1" : "0" };
}

/**
 * events.php (interface.md 4.6): the key's organization's events after `since`, oldest
 * first. A refusal also carries the cursor headers (the cursor unchanged, no more), so
 * a collector that only reads headers never jumps. Cursor guarantee: see insertEvent
 * (shared/events/db/events.ts) and docs/events.md.
 */
export async function events(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const params = readParams(request);
  if (params === null || !eventsParams(params)) return refuse("bad_request", {}, cursorHeaders("0", false));
  const parsed = parseFeedQuery(params);
  const sinceEcho = parsed.ok ? parsed.query.since : (digits(params.since) ?? "0");
  // A bad parameter is the call's outcome: counted and recorded like the other endpoint reasons.
  const gate = await passGate(request, deps, params, {
    endpoint: "events",
    serverOnly: true,
    after: () => (parsed.ok ? null : parsed.reason),
  });
  if (!gate.ok || !parsed.ok) return refuse(gate.ok ? "bad_request" : gate.reason, {}, cursorHeaders(sinceEcho, false));
  const { since, limit, type, format } = parsed.query;
  const rows = await feedPage(deps.readDb, { orgId: gate.prepared.org.id, since, limit: limit + 1, type });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const next = page.length > 0 ? String(page[page.length - 1].id) : since;
  const views = page.map(eventView);
  if (format === "syslog") {
    const host = new URL(deps.config.siteUrl).hostname;
    return {
      status: 200,
      headers: { ...cursorHeaders(next, hasMore), "content-type": "text/plain; charset=utf-8" },
      body: views.map((view) => `${syslogLine(view, host)}\n`).join(""),
    };
  }
  return {
    status: 200,
    headers: { ...cursorHeaders(next, hasMore), "content-type": "application/x-ndjson" },
    body: views.map((view) => `${JSON.stringify(view)}\n`).join(""),
  };
}
