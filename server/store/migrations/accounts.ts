/**
 * Migration 15: a front door (accounts, sign-in, sessions, scoped tokens,
 * passkeys, single sign-on, mail). Every table of it lives in the database,
 * so that API processes behind one load balancer share it.
 *
 * - users: a password (argon2id, PHC string), whether the email address is
 *   verified, administrator, disabled, a storage quota of its own. Accounts
 *   made before this were made by the operator from the shell, with the
 *   address they gave: they count as verified.
 * - tokens: scopes (a JSON array; NULL for every scope, as tokens made before
 *   scopes have), an expiry, when it was last used.
 * - sessions: browser sessions, known by the hash of their cookie's secret.
 * - one_time_links: the setup link, invitations, password resets and email
 *   verifications, each known by the hash of its secret and used once.
 * - auth_challenges: what a passkey ceremony or a single sign-on round trip
 *   must find again when the browser comes back (WebAuthn challenge; OIDC
 *   state, nonce and PKCE verifier).
 * - passkeys: WebAuthn credentials.
 * - identities: accounts linked to an OpenID provider's subject.
 * - security_events: what an account can review of its own security.
 */
export function accountsSchema(bigint: string): string {
  return `
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN storage_quota ${bigint};
UPDATE users SET email_verified = 1;

ALTER TABLE tokens ADD COLUMN scopes TEXT;
ALTER TABLE tokens ADD COLUMN time_expires ${bigint};
ALTER TABLE tokens ADD COLUMN time_last_used ${bigint};

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  secret_hash TEXT NOT NULL UNIQUE,
  -- How the person proved who they are: password, passkey, oidc, setup, signup, reset.
  method TEXT NOT NULL,
  user_agent TEXT,
  address TEXT,
  time_created ${bigint} NOT NULL,
  time_last_seen ${bigint} NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id, time_created);

CREATE TABLE one_time_links (
  id TEXT PRIMARY KEY,
  -- setup, invitation, reset, verify
  kind TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  email TEXT,
  -- JSON: what the link grants (an invitation's administrator flag, the player a collaborator invitation is for).
  data TEXT NOT NULL DEFAULT '{}',
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  time_created ${bigint} NOT NULL,
  time_expires ${bigint} NOT NULL,
  time_used ${bigint}
);
CREATE INDEX one_time_links_kind ON one_time_links(kind, time_created);

CREATE TABLE auth_challenges (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  data TEXT NOT NULL,
  time_expires ${bigint} NOT NULL
);

CREATE TABLE passkeys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL UNIQUE,
  public_key TEXT NOT NULL,
  counter ${bigint} NOT NULL DEFAULT 0,
  transports TEXT NOT NULL DEFAULT '[]',
  name TEXT NOT NULL,
  backed_up INTEGER NOT NULL DEFAULT 0,
  time_created ${bigint} NOT NULL,
  time_last_used ${bigint}
);
CREATE INDEX passkeys_user ON passkeys(user_id);

CREATE TABLE identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  time_created ${bigint} NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX identities_user ON identities(user_id);

CREATE TABLE security_events (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  address TEXT,
  user_agent TEXT,
  detail TEXT,
  time_created ${bigint} NOT NULL
);
CREATE INDEX security_events_user ON security_events(user_id, time_created);
`;
}
