-- The status page (docs/status.md).

-- One check per service per probe interval: `slot_at` is the start of the interval the
-- check belongs to. Two prober processes side by side may both try a slot; the unique
-- index keeps the first and the second insert does nothing.
ALTER TABLE probes ADD COLUMN slot_at timestamptz;
CREATE UNIQUE INDEX probes_service_slot ON probes (service, slot_at);
-- Range reads over every service (uptime bars, the quarterly report).
CREATE INDEX probes_at ON probes (at);

-- A service the operator names but does not (yet) probe is `not_configured`.
ALTER TABLE status_services ALTER COLUMN url DROP NOT NULL;

-- Atom entries need an `updated` time; maintenance can be cancelled (kept for the record).
ALTER TABLE incidents ADD COLUMN updated_at timestamptz;
ALTER TABLE maintenance ADD COLUMN updated_at timestamptz;
ALTER TABLE maintenance ADD COLUMN cancelled_at timestamptz;

-- Status changes are deployment-wide, attributed to no organization: their activity rows
-- carry org_id NULL and never appear in an organization's activity.php.
ALTER TABLE activity ALTER COLUMN org_id DROP NOT NULL;
