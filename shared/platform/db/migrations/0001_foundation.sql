-- The system of record. Times are timestamptz written by the application from the shared
-- clock (never now() in logic), so the test clock moves stored times too.

CREATE TABLE settings (
  name text PRIMARY KEY,
  value bytea NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE orgs (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('free', 'starter', 'professional', 'enterprise')),
  fix_target_days integer NOT NULL DEFAULT 30 CHECK (fix_target_days BETWEEN 1 AND 3650),
  subscription text NOT NULL CHECK (subscription IN ('active', 'lapsed')),
  -- Start of the first 30-day window; windows follow back to back while the subscription lives.
  cycle_anchor timestamptz NOT NULL,
  -- When the subscription lapsed: keys expire at the end of the window containing it.
  lapsed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE members (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name text NOT NULL,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL,
  UNIQUE (org_id, email)
);

CREATE TABLE domains (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name text NOT NULL,
  verified boolean NOT NULL DEFAULT false,
  verification_token text NOT NULL,
  verified_at timestamptz,
  verified_by text,
  created_at timestamptz NOT NULL,
  UNIQUE (org_id, name)
);
CREATE INDEX domains_name ON domains (name) WHERE verified;

CREATE TABLE api_keys (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  -- SHA-256 of the full key: the key itself is never stored.
  key_hash bytea NOT NULL UNIQUE,
  prefix text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('client', 'server')),
  name text NOT NULL,
  domain text,
  environment text NOT NULL DEFAULT 'production',
  industry text NOT NULL DEFAULT '',
  scopes text[] NOT NULL DEFAULT '{}',
  ip_allow text[] NOT NULL DEFAULT '{}',
  ip_deny text[] NOT NULL DEFAULT '{}',
  ip_binding boolean NOT NULL DEFAULT false,
  countries_allow text[] NOT NULL DEFAULT '{}',
  countries_block text[] NOT NULL DEFAULT '{}',
  rate_per_minute integer NOT NULL DEFAULT 600,
  is_trial boolean NOT NULL DEFAULT false,
  expires_at timestamptz,
  botcheck jsonb NOT NULL DEFAULT '{"enabled": false}',
  firewall jsonb,
  content_origin text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'revoked')),
  suspended_by text,
  revoked_at timestamptz,
  rotated_from bigint REFERENCES api_keys (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX api_keys_org ON api_keys (org_id) WHERE status <> 'revoked';

CREATE TABLE installations (
  key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  install text NOT NULL,
  status text NOT NULL CHECK (status IN ('approved', 'pending', 'blocked')),
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, install)
);

CREATE TABLE content (
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  content_key text NOT NULL,
  type text NOT NULL CHECK (type IN ('text', 'html', 'json', 'number', 'boolean')),
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, content_key)
);

-- AES-256-GCM under the master secret: `sealed` = version byte, IV, tag, ciphertext.
CREATE TABLE secrets (
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name text NOT NULL,
  sealed bytea NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, name)
);

-- Usage: per key, day (UTC), endpoint label and reason ('ok' for answered calls).
CREATE TABLE usage_daily (
  key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  org_id bigint NOT NULL,
  day date NOT NULL,
  endpoint text NOT NULL,
  reason text NOT NULL,
  counted bigint NOT NULL DEFAULT 0,
  refused bigint NOT NULL DEFAULT 0,
  calls bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, day, endpoint, reason)
);
CREATE INDEX usage_daily_org_day ON usage_daily (org_id, day);

-- Calls counted per organization and cycle: what restores the Redis counter after a loss.
CREATE TABLE cycle_usage (
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  cycle_start timestamptz NOT NULL,
  used bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, cycle_start)
);

-- Stream message ids already applied by the usage accountant: redelivery counts nothing twice.
CREATE TABLE usage_applied (
  stream text NOT NULL,
  message_id text NOT NULL,
  applied_at timestamptz NOT NULL,
  PRIMARY KEY (stream, message_id)
);
CREATE INDEX usage_applied_at ON usage_applied (applied_at);

CREATE TABLE scans (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  domain text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('web', 'dns', 'active')),
  grade text NOT NULL,
  score numeric NOT NULL,
  fail_count integer NOT NULL,
  warn_count integer NOT NULL,
  algorithm text NOT NULL,
  trigger text NOT NULL DEFAULT 'api',
  job_id text,
  started_at timestamptz NOT NULL,
  completed_at timestamptz NOT NULL
);
CREATE INDEX scans_latest ON scans (org_id, domain, kind, completed_at DESC, id DESC);
CREATE UNIQUE INDEX scans_job ON scans (job_id, kind) WHERE job_id IS NOT NULL;

CREATE TABLE findings (
  scan_id bigint NOT NULL REFERENCES scans (id) ON DELETE CASCADE,
  finding_key text NOT NULL,
  grp text NOT NULL,
  label text NOT NULL,
  status text NOT NULL,
  summary text NOT NULL,
  detail text NOT NULL,
  evidence text NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (scan_id, finding_key)
);

CREATE TABLE acknowledgements (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  domain text NOT NULL,
  finding_key text NOT NULL,
  note text NOT NULL DEFAULT '',
  acked_by text,
  acked_at timestamptz NOT NULL,
  expires_at timestamptz,
  released_at timestamptz,
  expiring_notified_at timestamptz,
  expired_notified_at timestamptz
);
CREATE UNIQUE INDEX acknowledgements_current ON acknowledgements (org_id, domain, finding_key) WHERE released_at IS NULL;

CREATE TABLE assignments (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  domain text NOT NULL,
  finding_key text NOT NULL,
  finding text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'in_progress', 'done')),
  owner_id bigint REFERENCES members (id) ON DELETE SET NULL,
  due_at date,
  found_at timestamptz NOT NULL,
  overdue_notified_at timestamptz,
  near_target_notified_at timestamptz,
  escalated_notified_at timestamptz,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, domain, finding_key)
);
CREATE INDEX assignments_org_due ON assignments (org_id, status, due_at);
CREATE INDEX assignments_owner ON assignments (owner_id);

CREATE TABLE assignment_history (
  id bigserial PRIMARY KEY,
  assignment_id bigint NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  who text NOT NULL,
  what text NOT NULL,
  detail jsonb
);
CREATE INDEX assignment_history_by ON assignment_history (assignment_id, at, id);

CREATE TABLE assignment_notes (
  id bigserial PRIMARY KEY,
  assignment_id bigint NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  who text NOT NULL,
  body text NOT NULL
);
CREATE INDEX assignment_notes_by ON assignment_notes (assignment_id, at, id);

-- The feed: the bigserial id is the cursor (`since`), monotonically increasing.
CREATE TABLE events (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  type text NOT NULL,
  time timestamptz NOT NULL,
  domain text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX events_org_cursor ON events (org_id, id);
CREATE INDEX events_org_type_cursor ON events (org_id, type, id);
CREATE INDEX events_time ON events (time);

-- The team activity record. No IP address column, by design.
CREATE TABLE activity (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  who text NOT NULL,
  via text NOT NULL CHECK (via IN ('api', 'admin', 'system')),
  grp text NOT NULL,
  action text NOT NULL,
  action_code text NOT NULL,
  domain text,
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_org_at ON activity (org_id, at DESC, id DESC);
CREATE INDEX activity_org_grp_at ON activity (org_id, grp, at DESC, id DESC);
CREATE INDEX activity_org_domain_at ON activity (org_id, domain, at DESC, id DESC);

CREATE TABLE siem_destinations (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('splunk_hec', 'elastic_bulk', 'syslog_tcp', 'http')),
  url text NOT NULL,
  token_sealed bytea,
  index_name text,
  delivered bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  last_error text,
  last_delivered_at timestamptz,
  last_event_id bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL
);
CREATE INDEX siem_destinations_org ON siem_destinations (org_id);

CREATE TABLE webhooks (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  url text NOT NULL,
  secret_sealed bytea NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX webhooks_org ON webhooks (org_id);

CREATE TABLE status_services (
  key text PRIMARY KEY CHECK (key IN ('website', 'api', 'dashboard')),
  name text NOT NULL,
  url text NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE probes (
  id bigserial PRIMARY KEY,
  service text NOT NULL REFERENCES status_services (key) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  ok boolean NOT NULL,
  latency_ms integer,
  status_code integer,
  error text
);
CREATE INDEX probes_service_at ON probes (service, at DESC);

CREATE TABLE incidents (
  id bigserial PRIMARY KEY,
  title text NOT NULL,
  impact text NOT NULL CHECK (impact IN ('minor', 'major')),
  affects text[] NOT NULL DEFAULT '{}',
  status text NOT NULL,
  postmortem text,
  created_at timestamptz NOT NULL,
  resolved_at timestamptz
);
CREATE INDEX incidents_open ON incidents (resolved_at, created_at DESC);

CREATE TABLE incident_updates (
  id bigserial PRIMARY KEY,
  incident_id bigint NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  status text NOT NULL,
  body text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX incident_updates_by ON incident_updates (incident_id, at DESC, id DESC);

CREATE TABLE maintenance (
  id bigserial PRIMARY KEY,
  title text NOT NULL,
  body text NOT NULL DEFAULT '',
  affects text[] NOT NULL DEFAULT '{}',
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  CHECK (ends_at > starts_at)
);
CREATE INDEX maintenance_window ON maintenance (ends_at, starts_at);
