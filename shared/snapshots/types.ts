import type { BotcheckSettings } from "../db/keys.js";
import type { Plan } from "../plans.js";

/** What verify needs of a key: a projection of its api_keys row. */
export interface KeySnapshot {
  id: number;
  org_id: number;
  kind: "client" | "server";
  name: string;
  prefix: string;
  environment: string;
  industry: string;
  scopes: string[];
  domain: string | null;
  ip_allow: string[];
  ip_deny: string[];
  ip_binding: boolean;
  countries_allow: string[];
  countries_block: string[];
  rate_per_minute: number;
  is_trial: boolean;
  expires_at_ms: number | null;
  status: "active" | "suspended";
  botcheck: BotcheckSettings;
  firewall: Record<string, unknown> | null;
  content_origin: string | null;
}

/** What verify needs of the key's organization. */
export interface OrgSnapshot {
  id: number;
  plan: Plan;
  allowance: number | null;
  subscription: "active" | "lapsed";
  cycle_anchor_ms: number;
  lapsed_at_ms: number | null;
  verified_domains: string[];
}

/** A snapshot as stored: the JSON and a version (a digest of the JSON). */
export interface Versioned<T> {
  value: T;
  v: string;
}

export interface SnapshotChange {
  type: "key" | "org" | "content" | "all";
  id: number;
}
