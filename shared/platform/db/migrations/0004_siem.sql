-- SIEM delivery state: when the last error happened, so `GET /orgs/:org/siem/:id` can tell
-- an old error (followed by deliveries) from a current one.
ALTER TABLE siem_destinations ADD COLUMN last_error_at timestamptz;
