/**
 * Accounts: organisations and their members, plans and cycles, API tokens, sessions, passkeys,
 * sign-in links and invitations, the activity log, and what each principal may do.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export { ACTIVITY_GROUPS, type ActivityGroup, recordActivity } from "./activity.js";
export { challengeOf, storeChallenge, takeChallenge } from "./challenges.js";
export { type ActivityRow, listActivity } from "./db/activity.js";
export { acceptedMembershipsOf, findUsableLink, insertLink, membershipsOf, spendLink } from "./db/member-links.js";
export {
  findSessionByToken,
  insertSession,
  listLiveSessions,
  revokeSession,
  type SessionRow,
  type SigninMethod,
  touchSession,
} from "./db/member-sessions.js";
export {
  allOrgIds,
  allowanceOf,
  countMembers,
  countOwners,
  cycleUsed,
  defaultOwnerOf,
  deleteMember,
  findMember,
  findMemberByEmail,
  findOrg,
  insertMember,
  insertOrg,
  listMembers,
  listOrgs,
  lockAndCountOrgs,
  lockMember,
  lockOrg,
  lockOrgCount,
  lockOrgSettings,
  type MemberRow,
  membersByIds,
  orgCycle,
  type OrgRow,
  setMemberRole,
  updateOrg,
} from "./db/orgs.js";
export { type OwnedKind, ownerOf } from "./db/ownership.js";
export {
  countPasskeys,
  findPasskeyByCredential,
  findPasskeyWithMember,
  insertPasskey,
  listPasskeys,
  type PasskeyRow,
  recordPasskeyUse,
  removePasskey,
} from "./db/passkeys.js";
export {
  countLiveTokens,
  insertToken,
  liveTokens,
  revokeMemberTokens,
  revokeToken,
  tokenByHash,
  type TokenRow,
  touchToken,
} from "./db/tokens.js";
export { invitationMail, invitationUrl, signinLinkMail, signinLinkUrl } from "./mails.js";
export { CYCLE_MS, cycleStart, type Plan, PLAN_NAMES, PLANS, windowEnd } from "./plans.js";
export { type LimitedResource, ORG_LIMITS } from "./limits.js";
export { type Budget, BUDGETS, LIFETIMES } from "./policy.js";
export { type Principal, type Role, roleAtLeast, type Scope } from "./principal.js";
export { csrfTokenOf, isToken, newToken, TOKEN_PATTERN, tokenHash, userHandleOf } from "./secrets.js";
export { isWellFormedOrgToken, looksLikeOrgToken, newOrgToken } from "./token-format.js";
export {
  authenticationOptions,
  registrationOptions,
  relyingPartyOf,
  verifyAuthentication,
  verifyRegistration,
} from "./webauthn.js";
