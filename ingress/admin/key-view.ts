import { DEFAULT_DIFFICULTY } from "../../shared/botcheck/index.js";
import type { KeyRow } from "../../shared/verify/index.js";
import { type OrgRow, windowEnd } from "../../shared/accounts/index.js";
import { iso } from "./common.js";

/** The effective end: the hard expires_at, or the organization's window end, whichever comes first. */
export function effectiveEnd(key: Pick<KeyRow, "expires_at">, org: Pick<OrgRow, "cycle_anchor" | "lapsed_at">, nowMs: number): number {
  const window = windowEnd({ cycleAnchorMs: org.cycle_anchor.getTime(), lapsedAtMs: org.lapsed_at?.getTime() ?? null }, nowMs);
  const hard = key.expires_at?.getTime();
  return hard === undefined ? window : Math.min(hard, window);
}

/**
 * The admin `details` of a key: the public key object's fields (interface.md 2.1) in the
 * operator contract's forms (operator-api.md: times ISO 8601, `scopes` the list; issue 12,
 * 11e), plus kind, status and every setting. `expires_at` is the effective end, as the
 * public object's is (the hard end or the organization's window, whichever comes first);
 * `hard_expires_at` is the hard end as set (null: none). `retires_at` is the end of the
 * grace when a rotation replaces the key (null: not being replaced), `rotated_from` the key
 * it replaced. Verify answers keep the public 2.1 forms (`full_access`/comma list,
 * `YYYY-MM-DD HH:MM:SS`): they are built elsewhere.
 */
export function keyDetails(key: KeyRow, org: OrgRow, nowMs: number) {
  const end = effectiveEnd(key, org, nowMs);
  // A key whose rotation grace ended is refused invalid_key from that instant: revoked, even
  // before the retirement sweep has written it down (docs/verify.md, "Rotation").
  const retired = key.retires_at !== null && key.retires_at.getTime() <= nowMs;
  const status = retired ? "revoked" : key.status === "active" && end <= nowMs ? "expired" : key.status;
  return {
    id: key.id,
    org_id: key.org_id,
    name: key.name,
    prefix: key.prefix,
    environment: key.environment,
    industry: key.industry,
    scopes: key.scopes,
    domain: key.domain ?? "",
    is_trial: key.is_trial,
    expires_at: iso(new Date(end)),
    kind: key.kind,
    status,
    ip_allow: key.ip_allow,
    ip_deny: key.ip_deny,
    ip_binding: key.ip_binding,
    countries_allow: key.countries_allow,
    countries_block: key.countries_block,
    rate_per_minute: key.rate_per_minute,
    rate_per_source_per_minute: key.rate_per_source_per_minute,
    hard_expires_at: iso(key.expires_at),
    // Settings stored before the proof's difficulty existed show the default they run with.
    botcheck: { ...key.botcheck, difficulty: key.botcheck.difficulty ?? DEFAULT_DIFFICULTY },
    firewall: key.firewall,
    content_origin: key.content_origin,
    // Additions to the contract's fields (docs/verify.md, "Rotation").
    rotated_from: key.rotated_from,
    retires_at: iso(key.retires_at),
    created_at: iso(key.created_at),
    updated_at: iso(key.updated_at),
  };
}
