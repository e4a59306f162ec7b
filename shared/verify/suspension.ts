import type { KeySnapshot } from "./snapshots/types.js";
import { PASS, refuse, type Verdict } from "./types.js";

/** A key paused by its owner or by the service. Refusals meanwhile are not charged. */
export function checkSuspension(key: Pick<KeySnapshot, "status">): Verdict {
  return key.status === "suspended" ? refuse("key_suspended") : PASS;
}
