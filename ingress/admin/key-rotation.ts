import { recordActivity, findOrg, lockOrg } from "../../shared/accounts/index.js";
import { sha256 } from "../../shared/platform/crypto/hash.js";
import { issueKey } from "../../shared/platform/crypto/key-format.js";
import {
  copyInstallations,
  countKeysInGrace,
  countLiveKeys,
  findKey,
  insertKey,
  scheduleRetirement,
  setKeyStatus,
  SETTING_COLUMNS,
  type KeyRow,
  type KeySettings,
} from "../../shared/verify/index.js";
import { transaction } from "../../shared/platform/db/pool.js";
import type { IngressDeps } from "../deps.js";
import { ok, refuse } from "../reply.js";
import { check, idParam, iso, validator, type AdminHandler } from "./common.js";
import { keyDetails } from "./key-view.js";

/** The longest grace a rotation may give the old key (operator-api.md section 5): a week. */
export const MAX_GRACE_S = 604_800;

export const rotateBody = validator<{ grace_s?: number }>({
  type: "object",
  properties: { grace_s: { type: "integer", minimum: 0, maximum: MAX_GRACE_S } },
  additionalProperties: false,
});

/** The new key's settings: the old key's, as they are. */
function settingsOf(key: KeyRow): KeySettings {
  return Object.fromEntries(
    SETTING_COLUMNS.map((f) => [f, f === "expires_at" ? (key.expires_at?.toISOString() ?? null) : key[f]]),
  ) as unknown as KeySettings;
}

async function details(deps: IngressDeps, key: KeyRow) {
  const org = await findOrg(deps.db, key.org_id);
  if (!org) throw new Error(`key ${key.id} has no organization`);
  return keyDetails(key, org, deps.clock.now());
}

/**
 * POST /keys/:id/rotate: a new key with the old one's settings and installations. Without
 * `grace_s` the old key is revoked at once; with it, the old key keeps working until
 * now + grace_s and is refused `invalid_key` from then on (its snapshot carries the end,
 * judged on the hot path; the retirement sweep revokes it for good and hands its
 * installations over). docs/verify.md, "Rotation".
 */
export const rotateKey: AdminHandler = async (_request, deps, params, body, caller) => {
  const id = idParam(params, "id");
  const current = id === null ? null : await findKey(deps.db, id);
  if (!current || current.status === "revoked") return refuse("not_found");
  const input = check(rotateBody, body);
  if ("reply" in input) return input.reply;
  const graceS = input.value.grace_s ?? 0;
  const now = deps.clock.now();
  if (current.retires_at !== null) {
    // Already replaced: past its grace it is gone; within it, rotate the key that replaces it.
    return current.retires_at.getTime() <= now
      ? refuse("not_found")
      : refuse("conflict", { detail: "the key is already being replaced; rotate its successor" });
  }
  const fresh = issueKey(current.kind, deps.config.environment === "production");
  const retiresAtMs = now + graceS * 1000;
  const row = await transaction(deps.db, async (tx) => {
    if (graceS > 0) {
      // At most one key in a grace per live key (under the organization's lock, as a new key's
      // count is): rotating the successor again, and again, would keep a chain of old keys
      // working past the plan's key count.
      await lockOrg(tx, current.org_id);
      if ((await countKeysInGrace(tx, current.org_id, now)) >= (await countLiveKeys(tx, current.org_id))) return "grace_taken" as const;
    }
    // Either claim locks the old row: a concurrent rotation or revocation finds it taken.
    const old =
      graceS === 0 ? await setKeyStatus(tx, current.id, "revoked", now) : await scheduleRetirement(tx, current.id, retiresAtMs, now);
    if (!old) return null;
    const created = await insertKey(tx, {
      orgId: current.org_id,
      hash: sha256(fresh.key),
      prefix: fresh.prefix,
      kind: current.kind,
      settings: settingsOf(current),
      nowMs: now,
      rotatedFrom: current.id,
    });
    // The new key keeps the old one's installations: rotation must not lock the site out.
    // PostgreSQL's here; those only Redis knows yet are taken when the new key is projected
    // (key-inherit-2.lua) and, for what the old key sees until it ends, when it retires
    // (key-retire-3.lua).
    await copyInstallations(tx, current.id, created.id);
    await recordActivity(tx, {
      orgId: created.org_id,
      atMs: now,
      who: caller.who,
      via: "admin",
      group: "team_security",
      action:
        graceS === 0
          ? `Key "${created.name}" rotated`
          : `Key "${created.name}" rotated; the old key works until ${iso(new Date(retiresAtMs))}`,
      actionCode: "key.rotated",
      domain: created.domain,
      detail: {
        old_key_id: current.id,
        key_id: created.id,
        prefix: created.prefix,
        grace_s: graceS,
        ...(graceS > 0 ? { old_key_retires_at: iso(new Date(retiresAtMs)) } : {}),
      },
    });
    return created;
  });
  if (!row) return refuse("not_found");
  if (row === "grace_taken") {
    return refuse("conflict", {
      detail: "as many keys are in a rotation's grace as are live: rotate without grace_s, or once a grace has ended",
    });
  }
  if (graceS === 0) {
    // The old key first: its revocation hands its Redis installations to the new key before the new key can be called.
    await deps.projector.keyChanged(current.id);
    await deps.projector.keyChanged(row.id, { installations: true });
  } else {
    // The new key first (it takes the old key's Redis installations before its index exists), then the old key's end.
    await deps.projector.keyChanged(row.id, { installations: true });
    await deps.projector.keyChanged(current.id);
  }
  return ok({ key: fresh.key, details: await details(deps, row) }, 201);
};
