import {
  recordActivity,
  insertMember,
  insertOrg,
  orgCycle,
  updateOrg,
  findOrg,
  allowanceOf,
  countMembers,
  cycleUsed,
  findMember,
  findMemberByEmail,
  listMembers,
  listOrgs,
  lockOrg,
  membersByIds,
  type MemberRow,
  type OrgRow,
  PLAN_NAMES,
  type Plan,
} from "../../shared/accounts/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import type { IngressDeps } from "../deps.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { atOrgLimit, check, idParam, iso, limitReached, memberEmailSchema, validator, type AdminHandler } from "./common.js";
import { createInvitation, mailInvitation } from "./auth/invitation.js";

const orgFields = {
  name: { type: "string", minLength: 1, maxLength: 200 },
  plan: { type: "string", enum: PLAN_NAMES },
  fix_target_days: { type: "integer", minimum: 1, maximum: 3650 },
  subscription: { type: "string", enum: ["active", "lapsed"] },
};

export const createOrgBody = validator<{ name: string; plan: Plan; fix_target_days: number; subscription: "active" | "lapsed" }>({
  type: "object",
  required: ["name"],
  properties: {
    ...orgFields,
    plan: { ...orgFields.plan, default: "free" },
    fix_target_days: { ...orgFields.fix_target_days, default: 30 },
    subscription: { ...orgFields.subscription, default: "active" },
  },
  additionalProperties: false,
});

export const patchOrgBody = validator<{
  name?: string;
  plan?: Plan;
  fix_target_days?: number;
  subscription?: "active" | "lapsed";
  default_owner?: string | null;
}>({
  type: "object",
  // default_owner: a member's e-mail; null or "" turns automatic assignment off. Only a
  // change can set it: an organization has no members when it is created.
  properties: { ...orgFields, default_owner: { type: ["string", "null"], maxLength: 320 } },
  additionalProperties: false,
});

export const memberBody = validator<{ name: string; email: string; role: "owner" | "admin" | "member" }>({
  type: "object",
  required: ["name", "email"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 200 },
    email: memberEmailSchema,
    role: { type: "string", enum: ["owner", "admin", "member"], default: "member" },
  },
  additionalProperties: false,
});

/** Counted calls in the current cycle: the live Redis counter, PostgreSQL when Redis lost it. */
async function usedNow(deps: IngressDeps, org: OrgRow): Promise<number> {
  const { startMs } = orgCycle(org, deps.clock.now());
  const live = await deps.redis.get(deps.keys.cycleUsed(org.id, startMs));
  return live === null ? cycleUsed(deps.db, org.id, startMs) : Number(live);
}

export function memberView(member: MemberRow) {
  return { id: member.id, name: member.name, email: member.email, role: member.role, created_at: iso(member.created_at) };
}

export async function orgView(deps: IngressDeps, org: OrgRow) {
  const defaultOwner = org.default_owner_id === null ? null : await findMember(deps.db, org.default_owner_id);
  return orgViewOf(deps, org, defaultOwner, await usedNow(deps, org));
}

function orgViewOf(deps: IngressDeps, org: OrgRow, defaultOwner: MemberRow | null, used: number) {
  const { startMs, resetsMs } = orgCycle(org, deps.clock.now());
  return {
    id: org.id,
    name: org.name,
    plan: org.plan,
    fix_target_days: org.fix_target_days,
    default_owner: defaultOwner ? { name: defaultOwner.name, email: defaultOwner.email } : null,
    subscription: org.subscription,
    cycle_started_at: iso(new Date(startMs)),
    cycle_resets_at: iso(new Date(resetsMs)),
    allowance: allowanceOf(org.plan),
    used,
  };
}

export const createOrg: AdminHandler = async (_request, deps, _params, body, caller) => {
  const input = check(createOrgBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const org = await transaction(deps.db, async (tx) => {
    const row = await insertOrg(tx, {
      name: input.value.name,
      plan: input.value.plan,
      fixTargetDays: input.value.fix_target_days,
      subscription: input.value.subscription,
      nowMs: now,
    });
    await recordActivity(tx, {
      orgId: row.id,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "settings",
      action: "Organization created",
      actionCode: "org.created",
      detail: { plan: row.plan },
    });
    return row;
  });
  await deps.projector.orgChanged(org.id);
  return ok({ org: await orgView(deps, org) }, 201);
};

export const getOrg: AdminHandler = async (_request, deps, params) => {
  const id = idParam(params, "org");
  const org = id === null ? null : await findOrg(deps.db, id);
  if (!org) return refuse("not_found");
  return ok({ org: await orgView(deps, org) });
};

export const patchOrg: AdminHandler = async (_request, deps, params, body, caller) => {
  const id = idParam(params, "org");
  if (id === null) return refuse("not_found");
  const input = check(patchOrgBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const v = input.value;
  // The plan and the subscription are billing, set by whoever bills (the operator): an owner
  // or a token that set them would give its organization an unlimited allowance, or keep a
  // lapsed subscription's keys alive, for nothing (docs/accounts.md).
  if ((v.plan !== undefined || v.subscription !== undefined) && caller.principal.kind !== "operator") return refuse("forbidden");
  let defaultOwner: MemberRow | null | undefined;
  if (v.default_owner !== undefined) {
    if (!(await findOrg(deps.db, id))) return refuse("not_found");
    defaultOwner =
      v.default_owner === null || v.default_owner.trim() === "" ? null : await findMemberByEmail(deps.db, id, v.default_owner.trim());
    if (defaultOwner === null && v.default_owner !== null && v.default_owner.trim() !== "") {
      return refuseField("bad_default_owner", 'default_owner must be the e-mail of a member of the organization (null or "" for nobody)');
    }
  }
  const org = await transaction(deps.db, async (tx) => {
    const before = await lockOrg(tx, id);
    if (!before) return null;
    const row = await updateOrg(
      tx,
      id,
      {
        name: v.name,
        plan: v.plan,
        fixTargetDays: v.fix_target_days,
        subscription: v.subscription,
        defaultOwnerId: defaultOwner === undefined ? undefined : (defaultOwner?.id ?? null),
      },
      now,
    );
    if (!row) return null;
    await recordActivity(tx, {
      orgId: id,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "settings",
      action: "Organization settings changed",
      actionCode: "org.updated",
      detail: { fields: Object.keys(v) },
    });
    if (defaultOwner !== undefined && (defaultOwner?.id ?? null) !== before.default_owner_id) {
      const previous = before.default_owner_id === null ? null : await findMember(tx, before.default_owner_id);
      await recordActivity(tx, {
        orgId: id,
        atMs: now,
        who: caller.who,
        via: "admin",
        group: "settings",
        action: defaultOwner
          ? `New failing findings are assigned to ${defaultOwner.name} <${defaultOwner.email}>`
          : "New failing findings are no longer assigned automatically",
        actionCode: "org.default_owner_set",
        detail: { default_owner: defaultOwner?.email ?? null, previous_default_owner: previous?.email ?? null },
      });
    }
    return row;
  });
  if (!org) return refuse("not_found");
  await deps.projector.orgChanged(org.id);
  return ok({ org: await orgView(deps, org) });
};

/**
 * Adds a member and invites it: the invitation link is made in the member's transaction and
 * e-mailed after the commit (ingress/admin/auth/invitation.ts). `invitation.sent` false:
 * the e-mail failed (logged); the member can still ask for a sign-in link.
 */
export const addMember: AdminHandler = async (_request, deps, params, body, caller) => {
  const id = idParam(params, "org");
  const org = id === null ? null : await findOrg(deps.db, id);
  if (id === null || !org) return refuse("not_found");
  const input = check(memberBody, body);
  if ("reply" in input) return input.reply;
  const now = deps.clock.now();
  const added = await transaction(deps.db, async (tx) => {
    // A member the organization has is a conflict, full or not.
    if (await atOrgLimit(tx, id, "members", () => countMembers(tx, id))) {
      return (await findMemberByEmail(tx, id, input.value.email)) ? null : "limit";
    }
    const row = await insertMember(tx, { orgId: id, ...input.value, nowMs: now });
    if (!row) return null;
    const invitation = await createInvitation(tx, row, now);
    await recordActivity(tx, {
      orgId: id,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "members",
      action: `Member ${row.email} added as ${row.role} and invited`,
      actionCode: "member.added",
      detail: { email: row.email, role: row.role, invitation_expires_at: iso(new Date(invitation.expiresAtMs)) },
    });
    return { member: row, invitation };
  });
  if (added === "limit") return limitReached("members");
  if (!added) return refuse("conflict", { detail: "a member with this email exists" });
  const sent = await mailInvitation(deps, added.member, org.name, added.invitation);
  return ok({ member: memberView(added.member), invitation: { expires_at: iso(new Date(added.invitation.expiresAtMs)), sent } }, 201);
};

/** GET /orgs (operator only): every organization, newest first, paged. */
export const listOrgsRoute: AdminHandler = async (request, deps) => {
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listOrgs(deps.db, paging);
  const owners = await membersByIds(
    deps.db,
    rows.flatMap((org) => (org.default_owner_id === null ? [] : [org.default_owner_id])),
  );
  const used = await Promise.all(rows.map((org) => usedNow(deps, org)));
  const orgs = rows.map((org, i) =>
    orgViewOf(deps, org, org.default_owner_id === null ? null : (owners.get(org.default_owner_id) ?? null), used[i]),
  );
  return ok({ orgs, ...pageFields(paging, total) });
};

/** GET /orgs/:org/members: name, e-mail and role of each member, newest first, paged. */
export const listMembersRoute: AdminHandler = async (request, deps, params) => {
  const id = idParam(params, "org");
  if (id === null || !(await findOrg(deps.db, id))) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await listMembers(deps.db, id, paging);
  return ok({ members: rows.map(memberView), ...pageFields(paging, total) });
};
