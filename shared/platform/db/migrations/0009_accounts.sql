-- Accounts (docs/accounts.md): organization tokens for the admin API, and when each key
-- was last used (the key list's `last_used_at`).

-- An organization token. Only SHA-256 of the token is stored; `prefix` is its first
-- characters, for recognition. Revocation stamps revoked_at (the row stays for the
-- activity record's sake); a revoked or expired token is refused on its next call.
CREATE TABLE org_tokens (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  prefix text NOT NULL,
  scopes text[] NOT NULL CHECK (scopes = '{read}' OR scopes = '{read,write}'),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  -- Written at most once a minute per token (the admin wrapper checks before writing).
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_by text
);
CREATE INDEX org_tokens_live ON org_tokens (org_id, created_at DESC, id DESC) WHERE revoked_at IS NULL;

-- The last call made with a key, as the usage actor applied it, to the minute: a row of
-- its own rather than a column of api_keys, so the usage actor's writes never wait on an
-- admin change's row lock of the key (nor the reverse).
CREATE TABLE key_last_used (
  key_id bigint PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  last_used_at timestamptz NOT NULL
);

-- The admin lists, newest first.
CREATE INDEX orgs_created ON orgs (created_at DESC, id DESC);
CREATE INDEX api_keys_org_created ON api_keys (org_id, created_at DESC, id DESC);
CREATE INDEX members_org_created ON members (org_id, created_at DESC, id DESC);
CREATE INDEX domains_org_created ON domains (org_id, created_at DESC, id DESC);
CREATE INDEX acknowledgements_org_current ON acknowledgements (org_id, acked_at DESC, id DESC) WHERE released_at IS NULL;
