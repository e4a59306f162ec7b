import type { KeySnapshot, OrgSnapshot } from "./snapshots/types.js";
import { hostOf, isLockVerified } from "./domain.js";
import { compileList, type AddressList } from "./ip.js";
import type { Verdict } from "./types.js";

/**
 * What the rules derive from a snapshot, computed once per snapshot version: parsed IP
 * lists, the normalized lock and whether the organization verified it. The cache hands
 * out the same snapshot object until its version changes, so a WeakMap keyed by that
 * object is a memo per version that never outlives it.
 */
export interface Prepared {
  readonly key: KeySnapshot;
  readonly org: OrgSnapshot;
  readonly allow: AddressList;
  readonly deny: AddressList;
  readonly lock: string | null;
  readonly lockVerified: boolean;
  /** Whether any rule looks at the caller's address (parsing it is skipped otherwise). */
  readonly needsAddress: boolean;
  /**
   * The last `domain` judged, its host (hostOf, "" for none) and its verdict against the lock:
   * most keys are called from one domain, so the host is parsed once per snapshot version.
   */
  readonly lockMemo: { input: string | undefined; host: string; verdict: Verdict | null };
}

export function prepare(key: KeySnapshot, org: OrgSnapshot): Prepared {
  const lock = key.domain === null || key.domain.trim() === "" ? null : (hostOf(key.domain) ?? key.domain.toLowerCase());
  const allow = compileList(key.ip_allow);
  const deny = compileList(key.ip_deny);
  return {
    key,
    org,
    allow,
    deny,
    lock,
    lockVerified: isLockVerified(lock, org.verified_domains),
    needsAddress: allow.size + deny.size + key.countries_allow.length + key.countries_block.length > 0,
    lockMemo: { input: undefined, host: "", verdict: null },
  };
}

export function createPreparer(): (key: KeySnapshot, org: OrgSnapshot) => Prepared {
  const memo = new WeakMap<KeySnapshot, Prepared>();
  return (key, org) => {
    const hit = memo.get(key);
    if (hit !== undefined && hit.org === org) return hit;
    const fresh = prepare(key, org);
    memo.set(key, fresh);
    return fresh;
  };
}
