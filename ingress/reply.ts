import { REASONS, type Reason } from "../shared/reasons.js";
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
