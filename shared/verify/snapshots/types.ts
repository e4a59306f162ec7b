import type { KeySettings } from "../db/keys.js";
import type { Plan } from "../../accounts/index.js";

/** What verify needs of a key: a projection of its api_keys row. */
export interface KeySnapshot extends Omit<KeySettings, "expires_at" | "rate_per_source_per_minute"> {
  id: number;
  org_id: number;
  kind: "client" | "server";
  prefix: string;
  /** Per-source limit of the key (docs/security.md); null = none. Absent in snapshots projected before it existed. */
  rate_per_source_per_minute?: number | null;
  expires_at_ms: number | null;
  /**
   * End of a rotation's grace (clock ms): from then on the key is refused `invalid_key`,
   * judged from the snapshot on the hot path. Absent when the key is not being replaced.
   */
  retires_at_ms?: number;
  status: "active" | "suspended";
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
