/**
 * The shapes the dashboard reads, as the contracts give them: the admin API's
 * (operator-api.md sections 2 and 5) and the public security-data endpoints' (interface.md
 * 2.6-2.8). Fields the dashboard does not use may be missing here; fields may be added.
 */

export interface Paged {
  total: number;
  page: number;
  limit?: number;
  has_more: boolean;
}

export interface Org {
  id: number;
  name: string;
  plan: string;
  fix_target_days: number;
  subscription: string;
  cycle_started_at: string;
  cycle_resets_at: string;
  allowance: number | null;
  used: number;
  default_owner?: { name: string; email: string } | null;
}

export interface Botcheck {
  enabled: boolean;
  hold_ms: number;
  allow_desktop: boolean;
  allow_tablet: boolean;
  allow_mobile: boolean;
  blocked_url: string | null;
}

export interface KeyDetails {
  id: number;
  org_id?: number;
  name: string;
  prefix: string;
  kind: "client" | "server";
  status: "active" | "suspended" | "revoked" | "expired";
  environment: string;
  industry: string;
  scopes: string[];
  domain: string;
  is_trial: boolean;
  expires_at: string | null;
  hard_expires_at?: string | null;
  ip_allow: string[];
  ip_deny: string[];
  ip_binding: boolean;
  countries_allow: string[];
  countries_block: string[];
  rate_per_minute: number;
  botcheck: Botcheck;
  firewall: Record<string, unknown> | null;
  content_origin: string | null;
  created_at?: string;
  updated_at?: string;
  last_used_at?: string | null;
}

export interface Installation {
  install: string;
  status: "approved" | "pending" | "blocked";
  first_seen_at: string | null;
  last_seen_at: string | null;
}

/** An installation in the organization's list (`GET /orgs/:org/installations`), with the key it was seen on. */
export interface OrgInstallation extends Installation {
  key_id: number;
  key_name: string;
}

export interface UsageDay {
  day: string;
  calls: number;
  counted: number;
  refused: number;
  by_reason: Record<string, number>;
  by_endpoint: Record<string, number>;
}

export interface Domain {
  name: string;
  verified: boolean;
  verified_at?: string | null;
  verification_token: string;
  txt_record: { name: string; value: string };
}

export interface Member {
  id?: number;
  name: string;
  email: string;
  role: "owner" | "admin" | "member";
  created_at?: string;
}

export interface TokenDetails {
  id: number;
  name: string;
  scopes: string[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
}

export interface Risk {
  domain: string;
  finding_key: string;
  note: string;
  acked_at: string;
  expires_at: string | null;
  expired: boolean;
}

export interface ContentItem {
  type: "text" | "html" | "json" | "number" | "boolean";
  value: unknown;
  updated_at: string;
}

export interface SecretInfo {
  name: string;
  updated_at: string;
}

export interface Destination {
  id: number;
  kind: string;
  url: string;
  index?: string | null;
  has_token?: boolean;
  delivered?: number;
  pending?: number;
  failed?: number;
  dead_letters?: number;
  last_error?: string | null;
  last_error_at?: string | null;
  last_delivered_at?: string | null;
}

export interface DeadLetter {
  dead_id: string;
  reason: string;
  error: string | null;
  attempts: number;
  at: string | null;
  event: unknown;
}

export interface Webhook {
  id: number;
  url: string;
  created_at: string;
  delivered?: number;
  pending?: number;
  failed?: number;
  last_error?: string | null;
  last_delivered_at?: string | null;
}

export interface Delivery {
  id: number;
  event_id: number;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface Service {
  key: "website" | "api" | "dashboard";
  name: string;
  url: string | null;
  configured: boolean;
  updated_at: string | null;
  /** The prober's last check (added to the admin answer by this branch). */
  last_probe?: { at: string; ok: boolean; latency_ms: number | null; status_code: number | null; error: string | null } | null;
}

export interface Incident {
  id: number;
  title: string;
  impact: "minor" | "major";
  status: string;
  affects: string[];
  created_at: string;
  resolved_at: string | null;
  postmortem: string | null;
  updates: { status: string; body: string; at: string }[];
}

export interface Maintenance {
  id: number;
  title: string;
  body: string;
  affects: string[];
  starts_at: string;
  ends_at: string;
  cancelled_at?: string | null;
}

export interface Finding {
  id: string;
  group: string;
  label: string;
  status: string;
  summary: string;
  detail: string;
  evidence: string;
  acknowledged: boolean;
  acknowledgement?: { note: string; acked_at: string; expires_at: string | null; expired: boolean };
}

export interface ScanSection {
  grade: string;
  score: number;
  fail_count: number;
  warn_count: number;
  scanned_at?: string;
  findings: Finding[];
}

export interface ScanResult {
  fresh: boolean;
  domain?: string;
  web: ScanSection;
  dns: ScanSection;
}

export interface HistoryPoint {
  score: number;
  grade: string;
  fail_count: number;
  at: string;
}

export interface Assignment {
  domain: string;
  finding_key: string;
  finding: string;
  status: "open" | "in_progress" | "done";
  owner: { name: string; email: string } | null;
  due_at: string | null;
  overdue: boolean;
  past_target: boolean;
  updated_at: string;
}

export interface ActivityEntry {
  time: string;
  who: string;
  action: string;
  action_code: string;
  group?: string;
  via?: string;
  domain: string | null;
  detail: unknown;
}

export interface Budget {
  limit: number;
  remaining: number;
  resetAt: number;
}
