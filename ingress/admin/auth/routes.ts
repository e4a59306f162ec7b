import { BUDGETS, LIFETIMES } from "../../../shared/accounts/index.js";
import type { REASONS } from "../../../shared/platform/reasons.js";
import type { IngressDeps } from "../../deps.js";
import type { Handler } from "../../router.js";
import {
  answerSchema,
  invitationOptionsSchema,
  linkAccountSchema,
  passkeyViewSchema,
  sessionViewSchema,
  signedInSchema,
  webauthnOptionsSchema,
} from "./common.js";
import * as invitation from "./invitation.js";
import * as link from "./link.js";
import * as passkeys from "./passkeys.js";
import * as sessions from "./sessions.js";
import * as signin from "./signin.js";

/**
 * Member sign-in (docs/accounts-members.md). The first group takes no credential but what
 * its body carries (each call spends a per-source budget); the second acts on the caller's
 * own session and takes nothing else: not the operator's token, not an organization token.
 *
 * The table is what registerAuthRoutes registers and what the admin OpenAPI document
 * describes (ingress/openapi/document.ts): each route's body is the schema its handler
 * validates with, its answer the shape of the view it sends, its refusals the reasons its
 * handler gives beyond those of its wrapper (`ceremony` or `withSession`, common.ts).
 */

export type AuthCredential =
  /** Nothing: the call itself proves nothing (a challenge, an e-mail asked for). */
  | "none"
  /** The invitation link's token, in the body (`token`). */
  | "invitation_link"
  /** A sign-in link's token, in the body (`token`). */
  | "signin_link"
  /** A WebAuthn assertion of a registered passkey, in the body (`response`). */
  | "passkey_assertion"
  /** The session cookie; a change (not GET) also the CSRF token and the site's Origin. */
  | "session";

export interface AuthRoute {
  method: "GET" | "POST" | "DELETE";
  path: string;
  handler: Handler<IngressDeps> & { credential?: "ceremony" | "session" };
  summary: string;
  credential: AuthCredential;
  /** The schema the handler validates its body with; none for a call that takes no body. */
  body?: object;
  answer: { status: 200 | 201; schema: object; cookie?: "set" | "cleared" };
  /** Reasons the handler refuses with, beyond its wrapper's. */
  refusals: readonly (keyof typeof REASONS)[];
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} minutes`;

export const AUTH_ROUTES: readonly AuthRoute[] = [
  {
    method: "POST",
    path: "/admin/v1/auth/invitation/accept/options",
    handler: invitation.invitationOptions,
    summary: "Registration options for the invited member's first passkey, and who the invitation is for.",
    credential: "invitation_link",
    body: invitation.optionsBody.schema,
    answer: { status: 200, schema: invitationOptionsSchema },
    refusals: ["invalid_link"],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/invitation/accept/verify",
    handler: invitation.invitationVerify,
    summary:
      "Registers the invited member's passkey (its attestation in `response`, to the challenge of the options call) and signs in; spends the invitation link.",
    credential: "invitation_link",
    body: invitation.verifyBody.schema,
    answer: { status: 201, schema: signedInSchema, cookie: "set" },
    refusals: ["invalid_link", "invalid_passkey", "conflict"],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signin/options",
    handler: signin.signinOptions,
    summary: "A passkey sign-in challenge (no credential list: passkeys are discoverable).",
    credential: "none",
    body: signin.optionsBody.schema,
    answer: { status: 200, schema: answerSchema({ options: webauthnOptionsSchema }) },
    refusals: [],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signin/verify",
    handler: signin.signinVerify,
    summary: `Signs in with a passkey's answer to the options call's challenge; failed answers naming a member's passkey spend that member's e-mail budget (${BUDGETS.failuresPerEmail.limit} per ${BUDGETS.failuresPerEmail.windowS} s).`,
    credential: "passkey_assertion",
    body: signin.verifyBody.schema,
    answer: { status: 200, schema: signedInSchema, cookie: "set" },
    refusals: ["invalid_passkey"],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signin/link",
    handler: link.requestSigninLink,
    summary: `Asks for a sign-in link by e-mail (single use, ${minutes(LIFETIMES.signinLinkMs)}); the same answer whether or not the address is a member's.`,
    credential: "none",
    body: link.requestBody.schema,
    answer: { status: 200, schema: answerSchema({}) },
    refusals: [],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signin/link/peek",
    handler: link.peekSigninLink,
    summary: "Whose an e-mailed sign-in link is (member and organization), without spending it: the sign-in page asks before it signs in.",
    credential: "signin_link",
    body: link.consumeBody.schema,
    answer: { status: 200, schema: linkAccountSchema },
    refusals: ["invalid_link"],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signin/link/consume",
    handler: link.consumeSigninLink,
    summary: "Signs in with an e-mailed sign-in link's token; spends the link.",
    credential: "signin_link",
    body: link.consumeBody.schema,
    answer: { status: 200, schema: signedInSchema, cookie: "set" },
    refusals: ["invalid_link"],
  },
  {
    method: "GET",
    path: "/admin/v1/auth/session",
    handler: sessions.currentSession,
    summary: "Who is signed in, the session, and its CSRF token (for a page after a reload).",
    credential: "session",
    answer: { status: 200, schema: signedInSchema },
    refusals: [],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/signout",
    handler: sessions.signOut,
    summary: "Signs out: revokes this session and clears the cookie.",
    credential: "session",
    answer: { status: 200, schema: answerSchema({}), cookie: "cleared" },
    refusals: [],
  },
  {
    method: "GET",
    path: "/admin/v1/auth/sessions",
    handler: sessions.listSessions,
    summary: "The member's live sessions (`current` marks this one).",
    credential: "session",
    answer: { status: 200, schema: answerSchema({ sessions: { type: "array", items: sessionViewSchema } }) },
    refusals: [],
  },
  {
    method: "DELETE",
    path: "/admin/v1/auth/sessions/:id",
    handler: sessions.deleteSession,
    summary: "Revokes one of the member's sessions (this one: also clears the cookie).",
    credential: "session",
    answer: { status: 200, schema: answerSchema({ session: sessionViewSchema }), cookie: "cleared" },
    refusals: ["not_found"],
  },
  {
    method: "GET",
    path: "/admin/v1/auth/passkeys",
    handler: passkeys.listMemberPasskeys,
    summary: "The member's passkeys.",
    credential: "session",
    answer: { status: 200, schema: answerSchema({ passkeys: { type: "array", items: passkeyViewSchema } }) },
    refusals: [],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/passkeys/options",
    handler: passkeys.addPasskeyOptions,
    summary: `Registration options for another passkey; the session's sign-in must be at most ${minutes(LIFETIMES.freshSigninMs)} old.`,
    credential: "session",
    body: passkeys.optionsBody.schema,
    answer: { status: 200, schema: answerSchema({ options: webauthnOptionsSchema }) },
    refusals: ["reauthentication_required", "limit_reached"],
  },
  {
    method: "POST",
    path: "/admin/v1/auth/passkeys/verify",
    handler: passkeys.addPasskeyVerify,
    summary: `Registers another passkey (its attestation in \`response\`, to the options call's challenge); the session's sign-in must be at most ${minutes(LIFETIMES.freshSigninMs)} old.`,
    credential: "session",
    body: passkeys.verifyBody.schema,
    answer: { status: 201, schema: answerSchema({ passkey: passkeyViewSchema }) },
    refusals: ["reauthentication_required", "invalid_passkey", "conflict", "limit_reached"],
  },
  {
    method: "DELETE",
    path: "/admin/v1/auth/passkeys/:id",
    handler: passkeys.deleteMemberPasskey,
    summary: "Removes one of the member's passkeys, never the last.",
    credential: "session",
    answer: { status: 200, schema: answerSchema({ passkey: passkeyViewSchema }) },
    refusals: ["not_found", "conflict"],
  },
];

export function registerAuthRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  for (const route of AUTH_ROUTES) add(route.method, route.path, route.handler);
}
