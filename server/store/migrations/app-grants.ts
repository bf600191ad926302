/**
 * Migration 30: what an OAuth app makes belongs to its grant (issue 28, "One
 * door").
 *
 * - webhooks.app_id, webhooks.grant_id: the app (its client id) and the grant
 *   whose access token made the subscription; NULL for one made with a
 *   personal token or the account's session. The app sees and changes only
 *   its own (server/resources/webhooks/webhook-ownership.ts). `app_id`
 *   references oauth_apps ON DELETE CASCADE: however an app goes (DELETE
 *   /apps/{appid}, deleted through oidc-provider, or with the account that
 *   registered it), its subscriptions go in the same statement, and their
 *   deliveries with them (webhook_deliveries.webhook_id cascades, migration
 *   8). A grant has no row of its own to reference (oauth_records is keyed by
 *   model and id), so its end deletes them explicitly, in its transaction;
 *   webhooks_by_grant finds them then, and webhooks_by_app serves the cascade
 *   (PostgreSQL does not index a referencing column by itself).
 * - idempotency_keys: keyed by (user_id, credential, idempotency_key), so
 *   that two apps acting for one account, or an app and the person, never
 *   get each other's answers. The credential is that of idempotency.ts's
 *   credentialOf: the grant of an OAuth token, the personal token, or the
 *   session. The table is made anew and its rows are dropped: a row of
 *   before has no credential, and keeping it for every credential of the
 *   account would keep, for its last 24 hours, the very leak this closes.
 *   The cost: a retry sent across the upgrade, within a day of its first
 *   request, runs again instead of being replayed.
 */
export function appGrantsSchema(bigint: string): string {
  return `
ALTER TABLE webhooks ADD COLUMN app_id TEXT REFERENCES oauth_apps(id) ON DELETE CASCADE;
ALTER TABLE webhooks ADD COLUMN grant_id TEXT;
CREATE INDEX webhooks_by_app ON webhooks(app_id);
CREATE INDEX webhooks_by_grant ON webhooks(grant_id);

DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  operation TEXT NOT NULL,
  claim TEXT,
  claim_expires ${bigint},
  response TEXT,
  time_created ${bigint} NOT NULL,
  expires ${bigint} NOT NULL,
  PRIMARY KEY (user_id, credential, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys(expires);
`;
}
