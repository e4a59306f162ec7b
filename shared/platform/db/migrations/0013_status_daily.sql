-- Daily roll-ups of the status checks (docs/status.md, "The 90-day bars"): one row per
-- service per UTC day, written with each check, so the page's 90 bars read at most 270 rows
-- however many checks there are. `day` is the UTC day of the check's `at`.
CREATE TABLE status_daily (
  service text NOT NULL REFERENCES status_services (key) ON DELETE CASCADE,
  day date NOT NULL,
  checks integer NOT NULL,
  up integer NOT NULL,
  PRIMARY KEY (service, day)
);

-- Days checked before the table existed.
INSERT INTO status_daily (service, day, checks, up)
SELECT service, (at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE ok)
FROM probes GROUP BY 1, 2;
