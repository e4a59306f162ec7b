import { ok } from "../reply.js";
import type { AdminHandler } from "./common.js";

/** GET /me (operator-api.md section 5): who the caller is, and what it may do. */
export const getMe: AdminHandler = (_request, _deps, _params, _body, { principal }) => {
  switch (principal.kind) {
    case "operator":
      return ok({ principal: { kind: "operator" } });
    case "token":
      return ok({
        principal: {
          kind: "token",
          org: { id: principal.orgId, name: principal.orgName },
          scopes: principal.scopes,
          token: { id: principal.tokenId, name: principal.tokenName },
        },
      });
    case "member":
      return ok({
        principal: {
          kind: "member",
          org: { id: principal.orgId, name: principal.orgName },
          role: principal.role,
          member: { id: principal.memberId, name: principal.name, email: principal.email },
        },
      });
  }
};
