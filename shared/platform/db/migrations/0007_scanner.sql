-- Every finding names the check result its score was keyed on (docs/scan.md), so clients
-- and regression events can tell "missing" from "weak" without parsing the summary.
-- Findings stored before this migration have no recorded result: NULL, answered as null.
ALTER TABLE findings ADD COLUMN result text;
