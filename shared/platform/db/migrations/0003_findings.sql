-- Findings workflow (issue 8): webhook deliveries, e-mails sent, the monitor's schedule
-- and single-finding re-checks. Assignments, history, notes, acknowledgements, activity
-- and webhooks already exist (0001).

-- One row per (event, webhook). The id is the delivery id a receiver de-duplicates on:
-- fixed per event and webhook, the same on every retry. `body` is the exact JSON sent
-- (the signature covers these bytes).
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  event_id bigint NOT NULL,
  event_type text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at DESC, id);

-- E-mails the notifier sent, by event id and recipient: a duplicated stream entry (the
-- relay delivers at least once) finds its row and sends nothing twice.
CREATE TABLE notifier_mail (
  event_id bigint NOT NULL,
  recipient text NOT NULL,
  sent_at timestamptz NOT NULL,
  PRIMARY KEY (event_id, recipient)
);

-- The monitor's schedule: when each verified domain is next re-scanned.
CREATE TABLE monitor_schedule (
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  domain text NOT NULL,
  next_run_at timestamptz NOT NULL,
  last_run_at timestamptz,
  PRIMARY KEY (org_id, domain)
);
CREATE INDEX monitor_schedule_due ON monitor_schedule (next_run_at);

-- Single-finding re-checks (POST assignments.php recheck=1), stored by the scanner.
CREATE TABLE finding_rechecks (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  domain text NOT NULL,
  finding_key text NOT NULL,
  status text NOT NULL,
  summary text NOT NULL,
  detail text NOT NULL,
  evidence text NOT NULL,
  job_id text NOT NULL UNIQUE,
  at timestamptz NOT NULL
);
CREATE INDEX finding_rechecks_by ON finding_rechecks (org_id, domain, finding_key, at DESC);
