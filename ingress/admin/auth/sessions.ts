import { recordActivity, LIFETIMES, listLiveSessions, revokeSession, countPasskeys } from "../../../shared/accounts/index.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import { ok, refuse } from "../../reply.js";
import { idParam } from "../common.js";
import { memberWho, sessionView, whoView, withSession } from "./common.js";
import { clearedCookie, siteOf } from "./cookie.js";

/**
 * The member's own sessions: who is signed in (with the CSRF token the page needs after a
 * reload), sign-out, the list of live sessions and revoking any of them. A revoked session
 * is refused from its next request (session-principal.ts reads the row every time).
 */

export const currentSession = withSession(async (_request, deps, _params, _body, live) =>
  ok({
    ...whoView(live.member, live.orgName),
    session: sessionView(live.session, live.session.id),
    csrf_token: live.csrfToken,
    passkeys: await countPasskeys(deps.db, live.member.id),
  }),
);

export const signOut = withSession(async (_request, deps, _params, _body, live) => {
  const now = deps.clock.now();
  await transaction(deps.db, async (tx) => {
    if (!(await revokeSession(tx, live.member.id, live.session.id, now))) return;
    await recordActivity(tx, {
      orgId: live.member.org_id,
      atMs: now,
      who: memberWho(live.member),
      via: "admin",
      group: "team_security",
      action: "Signed out",
      actionCode: "member.signed_out",
      detail: { session_id: live.session.id },
    });
  });
  return ok({}, 200, { "set-cookie": clearedCookie(siteOf(deps)) });
});

export const listSessions = withSession(async (_request, deps, _params, _body, live) => {
  const sessions = await listLiveSessions(deps.db, live.member.id, deps.clock.now(), LIFETIMES.sessionIdleMs);
  return ok({ sessions: sessions.map((s) => sessionView(s, live.session.id)) });
});

export const deleteSession = withSession(async (_request, deps, params, _body, live) => {
  const id = idParam(params, "id");
  if (id === null) return refuse("not_found");
  const now = deps.clock.now();
  const revoked = await transaction(deps.db, async (tx) => {
    const row = await revokeSession(tx, live.member.id, id, now);
    if (!row) return null;
    await recordActivity(tx, {
      orgId: live.member.org_id,
      atMs: now,
      who: memberWho(live.member),
      via: "admin",
      group: "team_security",
      action: id === live.session.id ? "Signed out" : "Session revoked",
      actionCode: "session.revoked",
      detail: { session_id: id, by_session_id: live.session.id },
    });
    return row;
  });
  if (!revoked) return refuse("not_found");
  return ok(
    { session: sessionView(revoked, live.session.id) },
    200,
    id === live.session.id ? { "set-cookie": clearedCookie(siteOf(deps)) } : undefined,
  );
});
