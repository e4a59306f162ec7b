import type { KeySnapshot } from "./snapshots/types.js";
import { PASS, refuse, type Verdict } from "./types.js";

/**
 * Existence and revocation. A revoked key's snapshot and index are deleted by the
 * projector, so "revoked" and "never existed" look the same here: both are
 * `invalid_key`, and neither counts against anybody (there is no account to charge).
 * Before the lookup, the key's format and checksum (shared/platform/crypto/key-format.ts); after
 * it, the end of a rotation's grace (isRetired).
 */
export function checkKeySent(raw: string | undefined): Verdict {
  return raw === undefined || raw.trim() === "" ? refuse("missing_key") : PASS;
}

export function checkKeyKnown(found: boolean): Verdict {
  return found ? PASS : refuse("invalid_key");
}

/**
 * A key a rotation replaced, at or past the end of its grace: refused `invalid_key` like a
 * revoked one, exactly from that instant on the service clock, before the retirement sweep
 * has revoked it for good (shared/verify/snapshots/retire.ts).
 */
export function isRetired(key: Pick<KeySnapshot, "retires_at_ms">, nowMs: number): boolean {
  return key.retires_at_ms !== undefined && nowMs >= key.retires_at_ms;
}
