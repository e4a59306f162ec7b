import type { IngressDeps } from "../../deps.js";
import type { Handler } from "../../router.js";
import { invitationOptions, invitationVerify } from "./invitation.js";
import { consumeSigninLink, requestSigninLink } from "./link.js";
import { addPasskeyOptions, addPasskeyVerify, deleteMemberPasskey, listMemberPasskeys } from "./passkeys.js";
import { currentSession, deleteSession, listSessions, signOut } from "./sessions.js";
import { signinOptions, signinVerify } from "./signin.js";

/**
 * Member sign-in (docs/accounts-members.md). The first group takes no credential (each call
 * spends a per-source budget); the second acts on the caller's own session and takes
 * nothing else: not the operator's token, not an organization token.
 */
export function registerAuthRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  add("POST", "/admin/v1/auth/invitation/accept/options", invitationOptions);
  add("POST", "/admin/v1/auth/invitation/accept/verify", invitationVerify);
  add("POST", "/admin/v1/auth/signin/options", signinOptions);
  add("POST", "/admin/v1/auth/signin/verify", signinVerify);
  add("POST", "/admin/v1/auth/signin/link", requestSigninLink);
  add("POST", "/admin/v1/auth/signin/link/consume", consumeSigninLink);

  add("GET", "/admin/v1/auth/session", currentSession);
  add("POST", "/admin/v1/auth/signout", signOut);
  add("GET", "/admin/v1/auth/sessions", listSessions);
  add("DELETE", "/admin/v1/auth/sessions/:id", deleteSession);
  add("GET", "/admin/v1/auth/passkeys", listMemberPasskeys);
  add("POST", "/admin/v1/auth/passkeys/options", addPasskeyOptions);
  add("POST", "/admin/v1/auth/passkeys/verify", addPasskeyVerify);
  add("DELETE", "/admin/v1/auth/passkeys/:id", deleteMemberPasskey);
}
