import {
  recordActivity,
  challengeOf,
  storeChallenge,
  takeChallenge,
  invitationMail,
  invitationUrl,
  LIFETIMES,
  newToken,
  tokenHash,
  userHandleOf,
  registrationOptions,
  relyingPartyOf,
  verifyRegistration,
  findUsableLink,
  insertLink,
  spendLink,
  type MemberRow,
  countPasskeys,
  findPasskeyByCredential,
  insertPasskey,
  listPasskeys,
} from "../../../shared/accounts/index.js";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { transaction, type Queryable } from "../../../shared/platform/db/pool.js";
import type { IngressDeps } from "../../deps.js";
import { ok, refuse } from "../../reply.js";
import { check, iso, validator } from "../common.js";
import { ceremony, memberWho, openSession, passkeyNameSchema, registrationResponseSchema, signedIn, tokenSchema } from "./common.js";
import { siteOf } from "./cookie.js";

/**
 * Invitations: `POST /orgs/:org/members` makes one (72 h, single use) and e-mails it; the
 * member opens the link, the page asks for registration options with the token and sends
 * the new passkey back with it. The link is spent only when the passkey is verified and
 * stored, in the transaction that opens the session: a cancelled ceremony leaves it usable.
 */

export interface Invitation {
  token: string;
  expiresAtMs: number;
}

/** A new invitation link for a member, in the caller's transaction (the member's own). */
export async function createInvitation(tx: Queryable, member: MemberRow, nowMs: number): Promise<Invitation> {
  const token = newToken();
  const link = await insertLink(tx, {
    memberId: member.id,
    purpose: "invitation",
    tokenHash: tokenHash(token),
    nowMs,
    lifetimeMs: LIFETIMES.invitationMs,
  });
  return { token, expiresAtMs: link.expires_at.getTime() };
}

/**
 * E-mails the invitation (logged when SMTP_URL is unset). A failed send is the caller's to
 * report: the member exists and can still be sent a sign-in link from the sign-in page.
 */
export async function mailInvitation(deps: IngressDeps, member: MemberRow, orgName: string, invitation: Invitation): Promise<boolean> {
  try {
    await deps.mailer.send(
      invitationMail({
        to: member.email,
        name: member.name,
        orgName,
        orgId: member.org_id,
        role: member.role,
        url: invitationUrl(siteOf(deps), invitation.token),
        expiresAtMs: invitation.expiresAtMs,
      }),
    );
    return true;
  } catch (error) {
    deps.logger.error({ err: error, memberId: member.id }, "invitation e-mail not sent");
    return false;
  }
}

export const optionsBody = validator<{ token: string }>({
  type: "object",
  required: ["token"],
  properties: { token: tokenSchema },
  additionalProperties: false,
});

export const verifyBody = validator<{ token: string; response: RegistrationResponseJSON; name?: string }>({
  type: "object",
  required: ["token", "response"],
  properties: { token: tokenSchema, response: registrationResponseSchema, name: passkeyNameSchema },
  additionalProperties: false,
});

export const invitationOptions = ceremony(async (_request, deps, _params, body) => {
  const input = check(optionsBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const found = await findUsableLink(deps.db, tokenHash(input.value.token), "invitation", now);
  if (!found) return refuse("invalid_link");
  const existing = await listPasskeys(deps.db, found.member.id);
  const options = await registrationOptions(
    relyingPartyOf(siteOf(deps)),
    { handle: userHandleOf(deps.masterSecret, found.member.id), email: found.member.email, name: found.member.name },
    existing.map((p) => ({ credentialId: p.credential_id, transports: p.transports })),
  );
  await storeChallenge(deps.redis, deps.keys, options.challenge, { purpose: "invitation", linkId: found.link.id }, now);
  return ok({
    options,
    member: { name: found.member.name, email: found.member.email, role: found.member.role },
    org: { id: found.member.org_id, name: found.orgName },
    expires_at: iso(found.link.expires_at),
  });
});

export const invitationVerify = ceremony(async (request, deps, _params, body) => {
  const input = check(verifyBody, body);
  if ("reply" in input) return input.reply;
  const { token, response } = input.value;
  const now = deps.clock.now();
  const challenge = challengeOf(response.response.clientDataJSON);
  const binding = challenge === null ? null : await takeChallenge(deps.redis, deps.keys, challenge, now);
  const found = await findUsableLink(deps.db, tokenHash(token), "invitation", now);
  if (!found) return refuse("invalid_link");
  if (challenge === null || binding?.purpose !== "invitation" || binding.linkId !== found.link.id) return refuse("invalid_passkey");
  const verified = await verifyRegistration(relyingPartyOf(siteOf(deps)), response, challenge);
  if (!verified.ok) {
    deps.logger.info({ requestId: request.requestId, detail: verified.detail }, "invitation passkey refused");
    return refuse("invalid_passkey");
  }
  const credential = verified.credential;
  // A credential ID already registered (to anyone) is refused: an authenticator must not
  // take over another member's passkey by claiming its ID.
  if (await findPasskeyByCredential(deps.db, credential.credentialId))
    return refuse("conflict", { detail: "this passkey is registered already" });
  const result = await transaction(deps.db, async (tx) => {
    const spent = await spendLink(tx, tokenHash(token), "invitation", now);
    if (!spent) return null;
    const member = spent.member;
    const passkey = await insertPasskey(tx, {
      memberId: member.id,
      ...credential,
      name: input.value.name ?? `Passkey ${(await countPasskeys(tx, member.id)) + 1}`,
      nowMs: now,
    });
    if (!passkey) throw new Error("passkey credential registered concurrently");
    await recordActivity(tx, {
      orgId: member.org_id,
      atMs: now,
      who: memberWho(member),
      via: "admin",
      group: "team_security",
      action: `Passkey "${passkey.name}" added`,
      actionCode: "passkey.added",
      detail: { passkey_id: passkey.id, name: passkey.name },
    });
    const opened = await openSession(tx, deps, request, { member, method: "invitation", passkeyId: passkey.id, nowMs: now });
    return { opened, member, orgName: spent.orgName, passkeys: (await listPasskeys(tx, member.id)).length };
  });
  if (!result) return refuse("invalid_link");
  return signedIn(deps, result.opened, result.member, result.orgName, result.passkeys, 201);
});
