import type { Ask } from "../../../shared/verify/index.js";
import type { KeySnapshot, OrgSnapshot } from "../../../shared/verify/snapshots/types.js";

export const NOW = Date.UTC(2030, 0, 15, 12, 0, 0);
export const DAY = 86_400_000;

export function keySnapshot(overrides: Partial<KeySnapshot> = {}): KeySnapshot {
  return {
    id: 7,
    org_id: 3,
    kind: "client",
    name: "Site",
    prefix: "ak_live_abcd",
    environment: "production",
    industry: "",
    scopes: [],
    domain: "example.com",
    ip_allow: [],
    ip_deny: [],
    ip_binding: false,
    countries_allow: [],
    countries_block: [],
    rate_per_minute: 600,
    is_trial: false,
    expires_at_ms: null,
    status: "active",
    botcheck: { enabled: false, hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true },
    firewall: null,
    content_origin: null,
    ...overrides,
  };
}

export function orgSnapshot(overrides: Partial<OrgSnapshot> = {}): OrgSnapshot {
  return {
    id: 3,
    plan: "starter",
    allowance: 300_000,
    subscription: "active",
    cycle_anchor_ms: NOW - 10 * DAY,
    lapsed_at_ms: null,
    verified_domains: ["example.com"],
    ...overrides,
  };
}

export function ask(overrides: Partial<Ask> = {}): Ask {
  return { domain: "example.com", scope: undefined, visitorIp: undefined, remoteAddress: "203.0.113.9", now: NOW, ...overrides };
}
