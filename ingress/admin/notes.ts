import { countNotes, findAssignment, insertNote, notesPageOf } from "../../shared/findings/index.js";
import { ORG_LIMITS, recordActivity } from "../../shared/accounts/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import { normalizeDomain } from "../../shared/platform/validation.js";
import { pageFields, queryPaging } from "../paging.js";
import { ok, refuse, refuseField } from "../reply.js";
import { check, idParam, iso, limitReached, validator, type AdminHandler } from "./common.js";
import { FINDING_KEY } from "./risks.js";

// `who` names the note's author; a signed-in member is its own author, so only the
// operator and tokens must send it.
export const noteBody = validator<{ who?: string; body: string }>({
  type: "object",
  required: ["body"],
  properties: {
    who: { type: "string", minLength: 1, maxLength: 200 },
    body: { type: "string", minLength: 1, maxLength: 10_000 },
  },
  additionalProperties: false,
});

function findingParams(params: Record<string, string>): { orgId: number; domain: string; findingKey: string } | null {
  const orgId = idParam(params, "org");
  const domain = normalizeDomain(params.domain ?? "");
  const findingKey = params.finding_key ?? "";
  return orgId === null || !domain || !FINDING_KEY.test(findingKey) ? null : { orgId, domain, findingKey };
}

/** GET /orgs/:org/assignments/:domain/:finding_key/notes: the notes of an assigned finding, oldest first, paged (404 otherwise). */
export const listNotes: AdminHandler = async (request, deps, params) => {
  const target = findingParams(params);
  const row = target && (await findAssignment(deps.db, target.orgId, target.domain, target.findingKey));
  if (!target || !row) return refuse("not_found");
  const paging = queryPaging(request.query);
  if ("refused" in paging) return refuse(paging.refused);
  const { total, rows } = await notesPageOf(deps.db, row.id, paging);
  return ok({
    notes: rows.map((n) => ({
      id: n.id,
      domain: target.domain,
      finding_key: target.findingKey,
      time: iso(n.at),
      who: n.who,
      body: n.body,
    })),
    ...pageFields(paging, total),
  });
};

/** POST /orgs/:org/assignments/:domain/:finding_key/notes: a note on an assigned finding (404 otherwise). */
export const addNote: AdminHandler = async (_request, deps, params, body, caller) => {
  const target = findingParams(params);
  if (!target) return refuse("not_found");
  const { orgId, domain, findingKey } = target;
  const input = check(noteBody, body);
  if ("reply" in input) return input.reply;
  const author = caller.principal.kind === "member" ? caller.who : input.value.who;
  if (author === undefined) return refuseField("missing_who", "who (the note's author) is required");
  const now = deps.clock.now();
  const note = await transaction(deps.db, async (tx) => {
    const row = await findAssignment(tx, orgId, domain, findingKey, true);
    if (!row) return null;
    // Counted under the finding's row lock (findAssignment's FOR UPDATE).
    if ((await countNotes(tx, row.id)) >= ORG_LIMITS.notes) return "limit";
    const created = await insertNote(tx, { assignmentId: row.id, atMs: now, who: author, body: input.value.body });
    await recordActivity(tx, {
      orgId,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "ownership",
      domain,
      action: `Note added to ${findingKey} on ${domain}`,
      actionCode: "finding.note_added",
      detail: { finding_key: findingKey, note_id: created.id, author },
    });
    return created;
  });
  if (note === "limit") return limitReached("notes");
  if (!note) return refuse("not_found");
  return ok({ note: { id: note.id, domain, finding_key: findingKey, time: iso(note.at), who: note.who, body: note.body } }, 201);
};
