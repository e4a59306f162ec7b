-- The member who made an organization token (docs/accounts.md, "Members"): removing the
-- member revokes the tokens it made, so leaving an organization leaves no working credential
-- behind. Null for a token made by the operator, and for one made before this column (those
-- name their maker only by text, `created_by`). The removal revokes them before the member's
-- row goes; ON DELETE SET NULL only keeps the row of a token that was already revoked.
ALTER TABLE org_tokens ADD COLUMN created_by_member bigint REFERENCES members (id) ON DELETE SET NULL;
CREATE INDEX org_tokens_member_live ON org_tokens (created_by_member) WHERE revoked_at IS NULL AND created_by_member IS NOT NULL;

-- Tokens made before this column name their maker by text only, as the activity record does
-- (`Name <email>`, ingress/admin/principal.ts whoOf): where that text is a member of the
-- token's organization as it is now, the token is that member's. A member renamed since
-- stays unattributed (docs/accounts.md says how to find and revoke such tokens).
UPDATE org_tokens t SET created_by_member = m.id
  FROM members m
 WHERE t.created_by_member IS NULL
   AND m.org_id = t.org_id
   AND t.created_by = m.name || ' <' || m.email || '>';
