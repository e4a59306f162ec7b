import {
  signinLinkMail,
  signinLinkUrl,
  BUDGETS,
  LIFETIMES,
  newToken,
  tokenHash,
  insertLink,
  acceptedMembershipsOf,
  findUsableLink,
  spendLink,
  countPasskeys,
} from "../../../shared/accounts/index.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import type { IngressDeps } from "../../deps.js";
import { ok, refuse } from "../../reply.js";
import { check, iso, memberEmailSchema, validator } from "../common.js";
import { ceremony, openSession, signedIn, tokenSchema } from "./common.js";
import { siteOf } from "./cookie.js";
import { emailSubject, spend } from "./limits.js";

/**
 * Sign-in links by e-mail: the recovery path (a lost passkey) and the way in for a member
 * whose invitation expired. A link is single-use and lives 15 minutes; it signs in, and the
 * session may then add a passkey.
 *
 * The request always answers the same `{"ok":true}`, member or not, and answers before any
 * lookup: the work (memberships, links, the e-mail) runs after the answer, so neither the
 * answer nor its timing tells whether the address is a member's. Its failure is logged:
 * nobody is waiting for it, and the member asks again.
 */

export const requestBody = validator<{ email: string }>({
  type: "object",
  required: ["email"],
  properties: { email: memberEmailSchema },
  additionalProperties: false,
});

export const consumeBody = validator<{ token: string }>({
  type: "object",
  required: ["token"],
  properties: { token: tokenSchema },
  additionalProperties: false,
});

/**
 * One e-mail with a link per accepted membership of the address; nothing when it has none.
 * A membership nobody accepted (no passkey, invitation unspent) gets no link: whoever made
 * the organization chose the address, not its owner, and a link into it, in a mail the
 * member asked for, would look like their own organization's. Its invitation stays its way
 * in (shared/accounts/db/member-links.ts acceptedMembershipsOf).
 */
async function sendSigninLinks(deps: IngressDeps, email: string): Promise<void> {
  const memberships = await acceptedMembershipsOf(deps.db, email);
  if (memberships.length === 0) return;
  const now = deps.clock.now();
  const links: { orgName: string; orgId: number; url: string }[] = [];
  for (const member of memberships) {
    const token = newToken();
    await insertLink(deps.db, {
      memberId: member.id,
      purpose: "signin",
      tokenHash: tokenHash(token),
      nowMs: now,
      lifetimeMs: LIFETIMES.signinLinkMs,
    });
    links.push({ orgName: member.org_name, orgId: member.org_id, url: signinLinkUrl(siteOf(deps), token) });
  }
  await deps.mailer.send(signinLinkMail({ to: memberships[0].email, links, expiresAtMs: now + LIFETIMES.signinLinkMs }));
}

export const requestSigninLink = ceremony(async (_request, deps, _params, body) => {
  const input = check(requestBody, body);
  if ("reply" in input) return input.reply;
  const email = input.value.email.trim().toLowerCase();
  const over = await spend(deps, BUDGETS.linkPerEmail, emailSubject(email));
  if (over) return over;
  sendSigninLinks(deps, email).catch((error: unknown) => deps.logger.error({ err: error }, "sign-in link not sent"));
  return ok({});
}, BUDGETS.linkPerSource);

/**
 * Whose the link is, without spending it: the sign-in page shows the account and signs in
 * only when asked to. A page elsewhere can send its visitor to a sign-in link of its own
 * (a login CSRF): opened without a click, that link would sign the visitor in to the
 * other page's account, where what they then enter is read by its owner. Holding the token
 * is all it takes to spend it, so naming its account tells its holder nothing more.
 */
export const peekSigninLink = ceremony(async (_request, deps, _params, body) => {
  const input = check(consumeBody, body);
  if ("reply" in input) return input.reply;
  const found = await findUsableLink(deps.db, tokenHash(input.value.token), "signin", deps.clock.now());
  if (!found) return refuse("invalid_link");
  return ok({
    member: { name: found.member.name, email: found.member.email, role: found.member.role },
    org: { id: found.member.org_id, name: found.orgName },
    expires_at: iso(found.link.expires_at),
  });
});

export const consumeSigninLink = ceremony(async (request, deps, _params, body) => {
  const input = check(consumeBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const result = await transaction(deps.db, async (tx) => {
    const spent = await spendLink(tx, tokenHash(input.value.token), "signin", now);
    if (!spent) return null;
    const opened = await openSession(tx, deps, request, { member: spent.member, method: "link", passkeyId: null, nowMs: now });
    return { opened, ...spent };
  });
  if (!result) return refuse("invalid_link");
  return signedIn(deps, result.opened, result.member, result.orgName, await countPasskeys(deps.db, result.member.id));
});
