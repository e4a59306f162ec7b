-- Security hardening (issue 12, docs/security.md).

-- Opt-in per-source limit of a key: calls per minute from one source network (an IPv4
-- address, an IPv6 /64). NULL = none (the default: one source calling R times gets R).
ALTER TABLE api_keys ADD COLUMN rate_per_source_per_minute integer
  CHECK (rate_per_source_per_minute IS NULL OR rate_per_source_per_minute >= 1);

-- Projections of PostgreSQL changes into Redis that have not (yet) succeeded: marked
-- before the projector writes Redis, cleared after it did (by the projection that
-- marked last: seq), retried by the reconcile loop (shared/snapshots/reconcile.ts).
-- A committed revocation therefore reaches Redis even when the first write failed.
CREATE TABLE projection_pending (
  kind text NOT NULL CHECK (kind IN ('key', 'org', 'content')),
  id bigint NOT NULL,
  seq bigint NOT NULL DEFAULT 1,
  since timestamptz NOT NULL,
  PRIMARY KEY (kind, id)
);
