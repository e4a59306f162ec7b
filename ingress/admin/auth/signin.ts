import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import {
  challengeOf,
  storeChallenge,
  takeChallenge,
  BUDGETS,
  userHandleOf,
  authenticationOptions,
  relyingPartyOf,
  verifyAuthentication,
  countPasskeys,
  findPasskeyWithMember,
  recordPasskeyUse,
} from "../../../shared/accounts/index.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import { ok, refuse } from "../../reply.js";
import { check, validator } from "../common.js";
import { authenticationResponseSchema, ceremony, openSession, signedIn } from "./common.js";
import { siteOf } from "./cookie.js";
import { emailSubject, exhausted, spend } from "./limits.js";

/**
 * Passkey sign-in: options (a challenge, no credential list: passkeys are discoverable, so
 * nothing says who is a member), then the browser's answer. The challenge is consumed by the
 * verify call whatever its outcome; the signature counter must move forward (recorded under
 * a condition, so one answer cannot sign in twice); failed answers naming a member's passkey
 * count against that member's e-mail budget.
 */

export const optionsBody = validator<Record<string, never>>({ type: "object", additionalProperties: false });

export const verifyBody = validator<{ response: AuthenticationResponseJSON }>({
  type: "object",
  required: ["response"],
  properties: { response: authenticationResponseSchema },
  additionalProperties: false,
});

export const signinOptions = ceremony(async (_request, deps, _params, body) => {
  const input = check(optionsBody, body);
  if ("reply" in input) return input.reply;
  const options = await authenticationOptions(relyingPartyOf(siteOf(deps)));
  await storeChallenge(deps.redis, deps.keys, options.challenge, { purpose: "signin" }, deps.clock.now());
  return ok({ options });
});

export const signinVerify = ceremony(async (request, deps, _params, body) => {
  const input = check(verifyBody, body);
  if ("reply" in input) return input.reply;
  const { response } = input.value;
  const now = deps.clock.now();
  const challenge = challengeOf(response.response.clientDataJSON);
  const binding = challenge === null ? null : await takeChallenge(deps.redis, deps.keys, challenge, now);
  if (challenge === null || binding?.purpose !== "signin") return refuse("invalid_passkey");
  const found = await findPasskeyWithMember(deps.db, response.id);
  if (!found) return refuse("invalid_passkey");
  const { passkey, member, orgName } = found;
  const failures = emailSubject(member.email);
  const over = await exhausted(deps, BUDGETS.failuresPerEmail, failures);
  if (over) return over;
  const fail = async (detail: string) => {
    deps.logger.info({ requestId: request.requestId, passkeyId: passkey.id, detail }, "passkey sign-in refused");
    return (await spend(deps, BUDGETS.failuresPerEmail, failures)) ?? refuse("invalid_passkey");
  };
  const handle = Buffer.from(userHandleOf(deps.masterSecret, member.id)).toString("base64url");
  if (response.response.userHandle !== undefined && response.response.userHandle !== handle) return fail("user handle of another member");
  const verified = await verifyAuthentication(relyingPartyOf(siteOf(deps)), response, challenge, {
    credentialId: passkey.credential_id,
    publicKey: passkey.public_key,
    counter: passkey.counter,
    transports: passkey.transports,
  });
  if (!verified.ok) return fail(verified.detail);
  const opened = await transaction(deps.db, async (tx) => {
    if (!(await recordPasskeyUse(tx, passkey.id, verified.newCounter, now))) return null;
    return openSession(tx, deps, request, { member, method: "passkey", passkeyId: passkey.id, nowMs: now });
  });
  if (!opened) return fail("signature counter did not move forward");
  return signedIn(deps, opened, member, orgName, await countPasskeys(deps.db, member.id));
});
