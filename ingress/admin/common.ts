import { safeEqual } from "../../shared/crypto/hash.js";
import { isStorableText, unstorableField, validator, type Validated } from "../../shared/validation.js";
import type { IngressDeps } from "../deps.js";
import { readJson, type Params } from "../params.js";
import { refuse, refuseField } from "../reply.js";
import type { HttpReply, HttpRequest, RouteParams } from "../types.js";

export type AdminHandler = (
  request: HttpRequest,
  deps: IngressDeps,
  params: RouteParams,
  body: Params,
) => Promise<HttpReply> | HttpReply;

/** Who the activity record names for changes made through the admin API. */
export const ADMIN_ACTOR = "operator";

/** Bearer-token gate (constant-time) and JSON body parse, shared by every admin call. */
export function admin(handler: AdminHandler) {
  return (request: HttpRequest, deps: IngressDeps, params: RouteParams): Promise<HttpReply> | HttpReply => {
    const expected = deps.config.adminToken;
    if (!expected) return refuse("admin_disabled");
    const header = request.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match || !safeEqual(match[1].trim(), expected)) return refuse("unauthorized");
    const body = readJson(request);
    if (body === null) return refuseField("bad_json", "the body is not a JSON object");
    const unstorable = unstorableField(body);
    if (unstorable !== null) {
      return refuseField(`bad_${isStorableText(unstorable) ? unstorable : "json"}`, "NUL, a lone surrogate or too deep nesting");
    }
    return handler(request, deps, params, body);
  };
}

export function idParam(params: RouteParams, name: string): number | null {
  const raw = params[name];
  return /^[1-9]\d{0,15}$/.test(raw ?? "") ? Number(raw) : null;
}

export function check<T>(validate: (data: unknown) => Validated<T>, body: Params): { value: T } | { reply: HttpReply } {
  const result = validate(body);
  return result.ok ? { value: result.value } : { reply: refuseField(result.reason, result.detail) };
}

export { validator };

export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

export function parseTime(value: string): number {
  return Date.parse(value.includes("T") || !value.includes(" ") ? value : value.replace(" ", "T"));
}
