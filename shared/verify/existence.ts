import { PASS, refuse, type Verdict } from "./types.js";

/**
 * Existence and revocation. A revoked key's snapshot and index are deleted by the
 * projector, so "revoked" and "never existed" look the same here: both are
 * `invalid_key`, and neither counts against anybody (there is no account to charge).
 */
export function checkKeySent(raw: string | undefined): Verdict {
  return raw === undefined || raw.trim() === "" ? refuse("missing_key") : PASS;
}

export function checkKeyKnown(found: boolean): Verdict {
  return found ? PASS : refuse("invalid_key");
}
