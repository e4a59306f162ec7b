-- Members sign in (docs/accounts-members.md): single-use links, passkeys and sessions.
-- Secrets are stored as SHA-256 digests only (a leaked table opens nothing); every row
-- belongs to one member and goes with it (ON DELETE CASCADE). No address column: who
-- signed in from where is not kept, as in the activity record.

-- Invitation (72 h) and sign-in (15 min) links. A link is spent by setting used_at in the
-- same transaction that makes the session, under `used_at IS NULL`: a replay finds it set.
CREATE TABLE member_links (
  id bigserial PRIMARY KEY,
  member_id bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('invitation', 'signin')),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX member_links_member ON member_links (member_id, created_at);

-- WebAuthn credentials. credential_id is the base64url credential ID the authenticator
-- answers with; counter is the last signature counter seen (a lower or equal one is a
-- cloned authenticator or a replay, unless both are 0: authenticators without a counter).
CREATE TABLE member_passkeys (
  id bigserial PRIMARY KEY,
  member_id bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  counter bigint NOT NULL,
  transports text[] NOT NULL DEFAULT '{}',
  device_type text NOT NULL,
  backed_up boolean NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX member_passkeys_member ON member_passkeys (member_id);

-- Sessions: the cookie holds the token, the row its digest. Live while revoked_at is null,
-- last_seen_at is within the idle lifetime (12 h) and expires_at (absolute, 7 d after the
-- sign-in) is ahead. method says how the member signed in; user_agent is shown in the
-- member's list of sessions (truncated), never an address.
CREATE TABLE member_sessions (
  id bigserial PRIMARY KEY,
  member_id bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  token_hash bytea NOT NULL UNIQUE,
  method text NOT NULL CHECK (method IN ('passkey', 'link', 'invitation')),
  passkey_id bigint REFERENCES member_passkeys (id) ON DELETE SET NULL,
  user_agent text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX member_sessions_member ON member_sessions (member_id, created_at);
