-- Automatic assignment (docs/findings.md "Automatic assignment"): the member that new
-- failing findings of the organization are assigned to. NULL: nothing is assigned
-- automatically. Removing the member clears the setting (ON DELETE SET NULL), so automatic
-- assignment stops instead of naming someone who left; the admin call checks the member
-- belongs to the organization.
ALTER TABLE orgs ADD COLUMN default_owner_id bigint REFERENCES members (id) ON DELETE SET NULL;
CREATE INDEX orgs_default_owner ON orgs (default_owner_id) WHERE default_owner_id IS NOT NULL;
