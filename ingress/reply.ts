import { REASONS, type Reason } from "../shared/platform/reasons.js";
import type { HttpReply } from "./types.js";

/** One way to refuse, for every endpoint: the status comes from the reasons table. */
export function refuse(reason: Reason, extra: Record<string, unknown> = {}, headers?: Record<string, string>): HttpReply {
  return { status: REASONS[reason].status, headers, body: { ok: false, reason, ...extra } };
}

/** Admin refusals may name a field (`bad_domain`, `missing_name`): always 400. */
export function refuseField(reason: string, detail?: string): HttpReply {
  return { status: 400, body: detail ? { ok: false, reason, detail } : { ok: false, reason } };
}

export function ok(body: Record<string, unknown>, status = 200, headers?: Record<string, string>): HttpReply {
  return { status, headers, body: { ok: true, ...body } };
}

const FAULT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "cache-control": "no-store" });
const FAULT_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "cache-control": "no-store", "access-control-allow-origin": "*" });

/**
 * The one fault answer (Redis down, a script fault, snapshots being rebuilt, a bug): 503
 * `unavailable` with the request id and no `authorized`/`allow` field, so no client takes
 * it for a refusal (interface.md: a 5xx is to be treated as unreachable). `cors` for the
 * endpoints browsers read.
 */
export function fault(requestId: string, cors = false): HttpReply {
  return {
    status: REASONS.unavailable.status,
    headers: (cors ? FAULT_CORS_HEADERS : FAULT_HEADERS) as Record<string, string>,
    body: { ok: false, reason: "unavailable", message: REASONS.unavailable.message, request_id: requestId },
  };
}
