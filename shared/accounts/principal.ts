/**
 * Who is calling the admin API (operator-api.md section 5). Resolved once per request by the
 * admin route wrapper; every route declares the `Reach` it needs in the route table.
 */
export type Role = "member" | "admin" | "owner";
export type Scope = "read" | "write";

export type Principal =
  | { kind: "operator" }
  | { kind: "token"; orgId: number; orgName: string; tokenId: number; tokenName: string; scopes: readonly Scope[] }
  | {
      kind: "member";
      orgId: number;
      orgName: string;
      memberId: number;
      role: Role;
      name: string;
      email: string;
      sessionId: number;
    };

/** Roles in increasing reach: a role may do everything a lower one may. */
export const ROLE_RANK: Readonly<Record<Role, number>> = { member: 1, admin: 2, owner: 3 };

export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}
