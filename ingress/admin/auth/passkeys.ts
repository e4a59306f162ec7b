import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import {
  recordActivity,
  challengeOf,
  storeChallenge,
  takeChallenge,
  LIFETIMES,
  userHandleOf,
  registrationOptions,
  relyingPartyOf,
  verifyRegistration,
  findPasskeyByCredential,
  insertPasskey,
  listPasskeys,
  removePasskey,
  ORG_LIMITS,
} from "../../../shared/accounts/index.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import type { IngressDeps } from "../../deps.js";
import { ok, refuse } from "../../reply.js";
import type { HttpReply } from "../../types.js";
import { atOrgLimit, check, idParam, limitReached, validator } from "../common.js";
import type { LiveSession } from "../session-principal.js";
import { memberWho, passkeyNameSchema, passkeyView, registrationResponseSchema, withSession } from "./common.js";
import { siteOf } from "./cookie.js";

/**
 * The member's passkeys: list, add (a WebAuthn registration made with the session, which
 * must come from a sign-in at most 15 minutes old: an older cookie, stolen or left open,
 * cannot add a way in), and remove any but the last (the member keeps a passkey; an
 * e-mailed link stays the recovery path).
 */

export const optionsBody = validator<Record<string, never>>({ type: "object", additionalProperties: false });

export const verifyBody = validator<{ response: RegistrationResponseJSON; name?: string }>({
  type: "object",
  required: ["response"],
  properties: { response: registrationResponseSchema, name: passkeyNameSchema },
  additionalProperties: false,
});

function staleSignin(deps: IngressDeps, live: LiveSession): HttpReply | null {
  return live.session.created_at.getTime() + LIFETIMES.freshSigninMs < deps.clock.now() ? refuse("reauthentication_required") : null;
}

export const listMemberPasskeys = withSession(async (_request, deps, _params, _body, live) => {
  const passkeys = await listPasskeys(deps.db, live.member.id);
  return ok({ passkeys: passkeys.map(passkeyView) });
});

export const addPasskeyOptions = withSession(async (_request, deps, _params, body, live) => {
  const input = check(optionsBody, body);
  if ("reply" in input) return input.reply;
  const stale = staleSignin(deps, live);
  if (stale) return stale;
  const existing = await listPasskeys(deps.db, live.member.id);
  if (existing.length >= ORG_LIMITS.passkeys) return limitReached("passkeys");
  const options = await registrationOptions(
    relyingPartyOf(siteOf(deps)),
    { handle: userHandleOf(deps.masterSecret, live.member.id), email: live.member.email, name: live.member.name },
    existing.map((p) => ({ credentialId: p.credential_id, transports: p.transports })),
  );
  await storeChallenge(deps.redis, deps.keys, options.challenge, { purpose: "add", sessionId: live.session.id }, deps.clock.now());
  return ok({ options });
});

export const addPasskeyVerify = withSession(async (request, deps, _params, body, live) => {
  const input = check(verifyBody, body);
  if ("reply" in input) return input.reply;
  const stale = staleSignin(deps, live);
  if (stale) return stale;
  const { response } = input.value;
  const now = deps.clock.now();
  const challenge = challengeOf(response.response.clientDataJSON);
  const binding = challenge === null ? null : await takeChallenge(deps.redis, deps.keys, challenge, now);
  if (challenge === null || binding?.purpose !== "add" || binding.sessionId !== live.session.id) return refuse("invalid_passkey");
  const verified = await verifyRegistration(relyingPartyOf(siteOf(deps)), response, challenge);
  if (!verified.ok) {
    deps.logger.info({ requestId: request.requestId, detail: verified.detail }, "new passkey refused");
    return refuse("invalid_passkey");
  }
  if (await findPasskeyByCredential(deps.db, verified.credential.credentialId))
    return refuse("conflict", { detail: "this passkey is registered already" });
  const passkey = await transaction(deps.db, async (tx) => {
    // Under a lock (atOrgLimit): two registrations at once cannot both take the last place.
    let count = 0;
    const full = await atOrgLimit(tx, live.member.org_id, "passkeys", async () => {
      count = (await listPasskeys(tx, live.member.id)).length;
      return count;
    });
    if (full) return null;
    const row = await insertPasskey(tx, {
      memberId: live.member.id,
      ...verified.credential,
      name: input.value.name ?? `Passkey ${count + 1}`,
      nowMs: now,
    });
    if (!row) throw new Error("passkey credential registered concurrently");
    await recordActivity(tx, {
      orgId: live.member.org_id,
      atMs: now,
      who: memberWho(live.member),
      via: "admin",
      group: "team_security",
      action: `Passkey "${row.name}" added`,
      actionCode: "passkey.added",
      detail: { passkey_id: row.id, name: row.name },
    });
    return row;
  });
  if (passkey === null) return limitReached("passkeys");
  return ok({ passkey: passkeyView(passkey) }, 201);
});

export const deleteMemberPasskey = withSession(async (_request, deps, params, _body, live) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    const row = await removePasskey(tx, live.member.id, id);
    if (row === null || row === "last") return row;
    await recordActivity(tx, {
      orgId: live.member.org_id,
      atMs: now,
      who: memberWho(live.member),
      via: "admin",
      group: "team_security",
      action: `Passkey "${row.name}" removed`,
      actionCode: "passkey.removed",
      detail: { passkey_id: row.id, name: row.name },
    });
    return row;
  });
  if (removed === null) return refuse("not_found");
  if (removed === "last") return refuse("conflict", { detail: "the last passkey cannot be removed; add another first" });
  return ok({ passkey: passkeyView(removed) });
});
