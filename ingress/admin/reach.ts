import { type Principal, type Role, roleAtLeast, ownerOf, type OwnedKind } from "../../shared/accounts/index.js";
import type { Reason } from "../../shared/platform/reasons.js";
import type { IngressDeps } from "../deps.js";
import type { RouteParams } from "../types.js";

/**
 * What an admin route needs of its caller (operator-api.md section 5), declared once per
 * route in the route table (routes.ts): the wrapper checks it before the handler runs.
 *
 * - `operator`: the operator only (the status page, the test clock, creating and listing
 *   organizations). Anyone else: 403 `forbidden`.
 * - `anyone`: every principal (GET /me).
 * - `org`: a route of one organization, found from `:org` (`org: "param"`) or from the
 *   key `:id` (`org: "key"`). When `:id` names another resource of that organization
 *   (`owned`), its owner must be the same organization. A principal of another
 *   organization, or a resource that does not exist, is answered 404 `not_found` alike.
 *   `role` is the lowest member role allowed; `mints` marks the calls that create
 *   credentials or members, or change a member's role or membership, which organization
 *   tokens never make.
 *
 * Read or write follows the method: GET (and HEAD) read, everything else writes; a token
 * without the `write` scope is refused every write with 403 `insufficient_scope`.
 */
export type Reach =
  | { readonly who: "operator" }
  | { readonly who: "anyone" }
  | {
      readonly who: "org";
      readonly org: "param" | "key";
      readonly role: Role;
      readonly owned?: Exclude<OwnedKind, "key">;
      readonly mints?: true;
    };

export const OPERATOR: Reach = { who: "operator" };
export const ANYONE: Reach = { who: "anyone" };

/** An organization route reached through `:org`, for members of at least `role`. */
export function orgRoute(role: Role, extra: { owned?: Exclude<OwnedKind, "key">; mints?: true } = {}): Reach {
  return { who: "org", org: "param", role, ...extra };
}

/** A route of one key, `:id`, for members of at least `role`. */
export function keyRoute(role: Role): Reach {
  return { who: "org", org: "key", role };
}

export function isWrite(method: string): boolean {
  return method !== "GET" && method !== "HEAD";
}

/** A positive integer id from the path, or null. */
export function idParam(params: RouteParams, name: string): number | null {
  const raw = params[name];
  return /^[1-9]\d{0,15}$/.test(raw ?? "") ? Number(raw) : null;
}

/**
 * The authorization check: null when `principal` may make this call, else the reason to
 * refuse it with. Every refusal is decided before the handler reads or changes anything,
 * and none tells a caller what another organization holds: the scope refusal depends on
 * the method alone, and the role and minting refusals come only once the resource is
 * known to be the caller's own (anything else is the 404 of a missing resource).
 */
export async function authorize(
  reach: Reach,
  principal: Principal,
  method: string,
  params: RouteParams,
  deps: IngressDeps,
): Promise<Reason | null> {
  if (principal.kind === "token" && isWrite(method) && !principal.scopes.includes("write")) return "insufficient_scope";
  if (reach.who === "anyone") return null;
  if (reach.who === "operator") return principal.kind === "operator" ? null : "forbidden";
  // The operator reaches every organization; its handlers answer 404 for what does not exist.
  if (principal.kind === "operator") return null;
  const id = idParam(params, reach.org === "param" ? "org" : "id");
  const orgId = id === null ? null : reach.org === "param" ? id : await ownerOf(deps.db, "key", id);
  if (orgId === null || orgId !== principal.orgId) return "not_found";
  if (reach.owned !== undefined) {
    const resource = idParam(params, "id");
    if (resource === null || (await ownerOf(deps.db, reach.owned, resource)) !== orgId) return "not_found";
  }
  if (principal.kind === "token") return reach.mints ? "forbidden" : null;
  return roleAtLeast(principal.role, reach.role) ? null : "forbidden";
}
