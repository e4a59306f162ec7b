import {
  countOwners,
  deleteMember,
  lockMember,
  lockOrgCount,
  lockOrgSettings,
  type MemberRow,
  recordActivity,
  revokeMemberTokens,
  setMemberRole,
} from "../../shared/accounts/index.js";
import { unassignMember } from "../../shared/findings/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import type { HttpReply } from "../types.js";
import { ok, refuse } from "../reply.js";
import { check, idParam, validator, type AdminHandler } from "./common.js";
import { memberView } from "./orgs.js";

/**
 * Taking access away (docs/accounts.md "Members"): an owner (or the operator) changes a
 * member's role or removes the member. Organization tokens never do either (the route
 * table's `mints`): a stolen write token must not make an accomplice an owner, nor shut the
 * owners out.
 *
 * An organization always keeps an owner: a removal or a demotion that would leave none is
 * 409 `conflict`, the caller's own included. Owners are counted under a lock on
 * (organization, "owners"), so two owners demoting each other at once cannot both succeed.
 *
 * The session principal is read from the database on every request
 * (session-principal.ts): a new role holds from the member's next request and revokes
 * nothing else; a removed member's sessions, passkeys and links go with its row, so its next
 * request is 401 `session_expired`.
 */

export const roleBody = validator<{ role: MemberRow["role"] }>({
  type: "object",
  required: ["role"],
  properties: { role: { type: "string", enum: ["owner", "admin", "member"] } },
  additionalProperties: false,
});

const LAST_OWNER = "the organization's last owner cannot be removed or given another role: make another member owner first";

function lastOwner(): HttpReply {
  return refuse("conflict", { detail: LAST_OWNER });
}

/** PATCH /orgs/:org/members/:id `{role}`: the member's role, from its next request on. */
export const changeMemberRole: AdminHandler = async (_request, deps, params, body, caller) => {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null) return refuse("not_found");
  const input = check(roleBody, body);
  if ("reply" in input) return input.reply;
  const role = input.value.role;
  const now = deps.clock.now();
  const changed = await transaction(deps.db, async (tx) => {
    await lockOrgCount(tx, orgId, "owners");
    const before = await lockMember(tx, orgId, id);
    if (!before) return "not_found" as const;
    if (before.role === role) return before;
    if (before.role === "owner" && (await countOwners(tx, orgId)) <= 1) return "last_owner" as const;
    const after = await setMemberRole(tx, id, role);
    if (!after) throw new Error("member vanished inside its transaction");
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "members",
      action: `Role of member ${after.email} changed from ${before.role} to ${after.role}`,
      actionCode: "member.role_changed",
      detail: { email: after.email, role: after.role, previous_role: before.role },
    });
    return after;
  });
  if (changed === "not_found") return refuse("not_found");
  if (changed === "last_owner") return lastOwner();
  return ok({ member: memberView(changed) });
};

/**
 * DELETE /orgs/:org/members/:id: the member goes, with its sessions (ended at once), passkeys
 * and links, and the organization tokens it made are revoked. The assignments it owned stay, unowned, with a history entry saying whom they
 * were taken from; a default owner naming it is cleared (automatic assignment stops until an
 * owner names another), and that change is recorded as PATCH /orgs/:org records it.
 */
export const removeMember: AdminHandler = async (_request, deps, params, _body, caller) => {
  const orgId = idParam(params, "org");
  const id = idParam(params, "id");
  if (orgId === null || id === null) return refuse("not_found");
  const now = deps.clock.now();
  const removed = await transaction(deps.db, async (tx) => {
    await lockOrgCount(tx, orgId, "owners");
    // The organization's row before the member's, in the order a settings change takes them.
    const org = await lockOrgSettings(tx, orgId);
    const member = org ? await lockMember(tx, orgId, id) : null;
    if (!org || !member) return "not_found" as const;
    if (member.role === "owner" && (await countOwners(tx, orgId)) <= 1) return "last_owner" as const;
    const who = `${member.name} <${member.email}>`;
    const unassigned = await unassignMember(tx, {
      orgId,
      memberId: member.id,
      atMs: now,
      who: caller.who,
      what: `unassigned: ${who} was removed from the organization`,
      detail: { code: "finding.unassigned", automatic: false, previous_owner: member.email },
    });
    // The tokens it made go with it: leaving leaves no working credential behind.
    const revoked = await revokeMemberTokens(tx, orgId, member.id, caller.who, now);
    for (const token of revoked) {
      await recordActivity(tx, {
        orgId,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "team_security",
        action: `Token "${token.name}" revoked: ${who}, who made it, was removed`,
        actionCode: "token.revoked",
        detail: { token_id: token.id, name: token.name, prefix: token.prefix, reason: "member_removed" },
      });
    }
    if (!(await deleteMember(tx, orgId, member.id))) throw new Error("member vanished inside its transaction");
    const defaultOwnerCleared = org.default_owner_id === member.id;
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "members",
      action: `Member ${member.email} (${member.role}) removed`,
      actionCode: "member.removed",
      detail: {
        email: member.email,
        role: member.role,
        assignments_unassigned: unassigned,
        default_owner_cleared: defaultOwnerCleared,
        tokens_revoked: revoked.length,
      },
    });
    if (defaultOwnerCleared) {
      await recordActivity(tx, {
        orgId,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "settings",
        action: `New failing findings are no longer assigned automatically: ${who} was removed`,
        actionCode: "org.default_owner_set",
        detail: { default_owner: null, previous_default_owner: member.email },
      });
    }
    return { member, unassigned, defaultOwnerCleared, tokensRevoked: revoked.length };
  });
  if (removed === "not_found") return refuse("not_found");
  if (removed === "last_owner") return lastOwner();
  return ok({
    removed: memberView(removed.member),
    assignments_unassigned: removed.unassigned,
    default_owner_cleared: removed.defaultOwnerCleared,
    tokens_revoked: removed.tokensRevoked,
  });
};
