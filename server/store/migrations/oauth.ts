/**
 * Migration 25: the OAuth 2.1 authorization server (oidc-provider,
 * server/resources/oauth/), kept in the store so that every process of the
 * server honours the same grants, codes and tokens.
 *
 * - oauth_apps: the apps (OAuth clients). `owner_id` is the account that
 *   registered it through POST /apps; NULL for one registered dynamically
 *   (RFC 7591). `metadata` is the client metadata oidc-provider reads, as
 *   JSON, without the secret; a confidential app's `client_secret` is in
 *   `secret_sealed`, sealed with the server's secret box (it must be read
 *   back to check client_secret_basic, so it cannot be a one-way hash).
 * - oauth_records: everything else oidc-provider keeps (grants, codes,
 *   access and refresh tokens, sessions, interactions), one row per model
 *   and id. Ids are bearer secrets for most models (a code, a token, a
 *   session cookie): only their SHA-256 is kept, as for personal tokens.
 *   `grant_id`, `uid`, `user_code`, `account_id` and `client_id` are copied
 *   out of the payload for the lookups oidc-provider and the connected-apps
 *   list make; `account_id` goes with its account.
 * - tokens: an access token of OAuth is also a row of `tokens` (its hash,
 *   its scopes, its expiry), so that the API checks it exactly as a personal
 *   token; `grant_id` and `client_id` say which grant and app it belongs to,
 *   and `audience` the resource it was issued for (RFC 8707: the API, or,
 *   later, the MCP server), NULL for personal tokens, which any takes.
 */
export function oauthSchema(bigint: string): string {
  return `
CREATE TABLE oauth_apps (
  id TEXT PRIMARY KEY,
  owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('public', 'confidential')),
  metadata TEXT NOT NULL,
  secret_sealed TEXT,
  time_created ${bigint} NOT NULL
);
CREATE INDEX oauth_apps_by_owner ON oauth_apps(owner_id, time_created);

CREATE TABLE oauth_records (
  model TEXT NOT NULL,
  id_hash TEXT NOT NULL,
  payload TEXT NOT NULL,
  grant_id TEXT,
  uid TEXT,
  user_code TEXT,
  account_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  client_id TEXT,
  time_created ${bigint} NOT NULL,
  time_expires ${bigint},
  time_consumed ${bigint},
  PRIMARY KEY (model, id_hash)
);
CREATE INDEX oauth_records_by_grant ON oauth_records(grant_id);
CREATE INDEX oauth_records_by_uid ON oauth_records(model, uid);
CREATE INDEX oauth_records_by_user_code ON oauth_records(model, user_code);
CREATE INDEX oauth_records_by_account ON oauth_records(account_id, client_id);
CREATE INDEX oauth_records_by_expiry ON oauth_records(time_expires);

ALTER TABLE tokens ADD COLUMN grant_id TEXT;
ALTER TABLE tokens ADD COLUMN client_id TEXT;
ALTER TABLE tokens ADD COLUMN audience TEXT;
CREATE INDEX tokens_by_grant ON tokens(grant_id);
`;
}
