/**
 * The admin API's answers as the CLI reads them (operator-api.md section 2): only the
 * fields it prints. `AdminClient.call<T>()` names the answer it expects; `--json` prints
 * the answer as it came, whatever else it carries.
 */

type Time = string | null;

export interface Paged {
  has_more?: boolean;
  page?: number;
  total?: number;
}

export interface OrgView {
  id: number;
  name: string;
  plan: string;
  subscription: string;
  allowance: number | null;
  used?: number;
  cycle_started_at: Time;
  cycle_resets_at: Time;
  fix_target_days: number;
  default_owner: { name: string; email: string } | null;
}

export interface KeyDetails {
  id: number;
  /** The end of the grace when a rotation replaces the key (null: not being replaced). */
  retires_at?: string | null;
  rotated_from?: number | null;
  name: string;
  prefix: string;
  kind: string;
  status: string;
  domain: string | null;
  environment: string | null;
  scopes: string[];
  ip_allow: string[];
  ip_deny: string[];
  countries_allow: string[] | null;
  countries_block: string[] | null;
  rate_per_minute: number | null;
  expires_at: Time;
}

export interface KeyRow {
  id: number;
  prefix: string;
  kind: string;
  status: string;
  domain: string | null;
  last_used_at: Time;
  expires_at: Time;
  name: string;
}

export interface TxtRecord {
  name: string;
  value: string;
}

export interface DomainView {
  name: string;
  verified: boolean;
  txt_record: TxtRecord;
}

export interface MemberView {
  id: number;
  name: string;
  email: string;
  role: string;
}

export interface TokenView {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  last_used_at: Time;
  expires_at: Time;
}

export interface Principal {
  kind: "operator" | "token" | "member";
  org?: { id: number; name: string };
  token?: { name: string };
  member?: { name: string; email: string };
  scopes?: string[];
  role?: string;
}

export interface RiskView {
  domain: string;
  finding_key: string;
  acked_at: Time;
  expires_at: Time;
  expired?: boolean;
  note: string | null;
}

export interface InstallationView {
  install: string;
  status: string;
  first_seen_at: Time;
  last_seen_at: Time;
}

export interface ScanSectionView {
  grade: string | null;
  score: number | null;
  fail_count: number;
  warn_count: number;
  findings: { id: string; status: string; summary: string; acknowledged?: boolean }[];
}

export interface ScanAnswer {
  domain: string;
  web: ScanSectionView;
  dns: ScanSectionView;
}

export interface WebhookView {
  id: number;
  url: string;
  delivered?: number;
  pending?: number;
  failed?: number;
  last_delivered_at?: Time;
  last_error?: string | null;
}

export interface DeliveryView {
  id: number;
  event_id: number;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  next_attempt_at: Time;
  last_error: string | null;
}

export interface NoteView {
  id: number;
  finding_key: string;
  domain: string;
  time: Time;
  who: string;
  body: string;
}

export interface SiemDestinationView {
  id: number;
  kind: string;
  url: string;
  index: string | null;
  has_token: boolean;
  delivered: number;
  pending: number;
  failed: number;
  dead_letters: number;
  last_delivered_at: Time;
  last_event_id: number | null;
  last_error: string | null;
  last_error_at: Time;
}

export interface IncidentView {
  id: number;
  title: string;
  status: string;
  impact: string;
  affects: string[];
  created_at: Time;
  resolved_at: Time;
  postmortem: string | null;
  updates?: { at: Time; status: string; body: string }[];
}

export interface MaintenanceView {
  id: number;
  title: string;
  starts_at: Time;
  ends_at: Time;
  affects: string[];
  cancelled_at: Time;
  body: string | null;
}

export interface ProbeView {
  ok: boolean;
  status_code: number | null;
  at: Time;
  error: string | null;
}

export interface ServiceView {
  key: string;
  name: string;
  configured?: boolean;
  url: string | null;
  last_probe?: ProbeView | null;
}

export interface ActivityView {
  time: Time;
  who: string;
  action: string;
}
