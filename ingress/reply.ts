import { REASONS, type Reason } from "../shared/platform/reasons.js";
import type { HttpReply } from "./types.js";

/**
 * One way to refuse, for every endpoint: the status comes from the reasons table, and the
 * body carries the reason's `message` in words as verify's answers do.
 */
export function refuse(reason: Reason, extra: Record<string, unknown> = {}, headers?: Record<string, string>): HttpReply {
  return { status: REASONS[reason].status, headers, body: { ok: false, reason, message: REASONS[reason].message, ...extra } };
}

/** Admin refusals may name a field (`bad_domain`, `missing_name`): always 400, with a message in words. */
export function refuseField(reason: string, detail?: string): HttpReply {
  const message = fieldMessage(reason, detail);
  return { status: 400, body: detail ? { ok: false, reason, message, detail } : { ok: false, reason, message } };
}

/** `missing_url` → "url is required.", `bad_url` with a detail → "url: <detail>." */
export function fieldMessage(reason: string, detail?: string): string {
  const known = (REASONS as Record<string, { message: string } | undefined>)[reason];
  if (known && !detail) return known.message;
  const field = /^(?:missing|bad)_(.+)$/.exec(reason)?.[1]?.replaceAll("_", " ");
  if (field === undefined) return detail ? `${detail}.` : (known?.message ?? "The request was refused.");
  if (reason.startsWith("missing_")) return `${field} is required.`;
  return detail ? `${field}: ${detail}.` : `${field} is not valid.`;
}

export function ok(body: Record<string, unknown>, status = 200, headers?: Record<string, string>): HttpReply {
  return { status, headers, body: { ok: true, ...body } };
}

const FAULT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "cache-control": "no-store" });
const FAULT_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "access-control-allow-origin": "*",
});

/** The two fault reasons: `unavailable` (503) for the public API, `internal_error` (500) where a contract says so. */
export type FaultReason = "unavailable" | "internal_error";

/**
 * The one fault answer (Redis down, a script fault, snapshots being rebuilt, a bug): fixed
 * and generic, with the request id and no `authorized`/`allow` field, so no client takes it
 * for a refusal (interface.md: a 5xx is to be treated as unreachable), never cached. `cors`
 * for the endpoints browsers read; `shape` for the reason when not `unavailable` and the
 * headers a route adds (app.ts decides both for a thrown fault).
 */
export function fault(
  requestId: string,
  cors = false,
  shape?: { reason?: FaultReason; headers?: Readonly<Record<string, string>> },
): HttpReply {
  const reason = shape?.reason ?? "unavailable";
  const base = cors ? FAULT_CORS_HEADERS : FAULT_HEADERS;
  return {
    status: REASONS[reason].status,
    headers: (shape?.headers ? { ...base, ...shape.headers } : base) as Record<string, string>,
    body: { ok: false, reason, message: REASONS[reason].message, request_id: requestId },
  };
}
