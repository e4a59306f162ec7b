-- Rotation with a grace period (docs/verify.md "Rotation"): the old key keeps working until
-- `retires_at`, then is refused `invalid_key` (checked from its snapshot on the verify hot
-- path) and retired for good (status `revoked`) by the ingress's retirement sweep. NULL: the
-- key is not being replaced.
ALTER TABLE api_keys ADD COLUMN retires_at timestamptz;
CREATE INDEX api_keys_retiring ON api_keys (retires_at) WHERE retires_at IS NOT NULL AND status <> 'revoked';

-- The owner is told once that an installation waits for approval (docs/events.md
-- "installation.pending"): one row per installation told, claimed by the usage actor in the
-- transaction that writes the event and the activity row, so a redelivered or repeated usage
-- message (or two usage processes) tells nobody twice.
CREATE TABLE installation_notices (
  key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  install text NOT NULL,
  noted_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, install)
);
