/**
 * Migration 24: idempotency keys (server/http/idempotency.ts), one row per
 * account and key, so that every server process on the database honours a
 * key another one saw.
 *
 * - claim / claim_expires: the request that holds the key while it runs (a
 *   random token and a lease, renewed while it runs). A process that dies
 *   mid-request leaves a claim that lapses, not a key stuck for a day.
 * - response: the first answer, once there is one (sealed: status, the
 *   headers replayed, the body's bytes), replayed to a retry.
 * - expires: 24 hours after the key was first used; after that the row is
 *   gone (swept) or ignored, and the key is new again.
 *
 * Keyed by (user_id, key): keys are per account. ON DELETE CASCADE: an
 * account deleted takes its keys and stored answers with it.
 */
export function idempotencySchema(bigint: string): string {
  return `
CREATE TABLE idempotency_keys (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  operation TEXT NOT NULL,
  claim TEXT,
  claim_expires ${bigint},
  response TEXT,
  time_created ${bigint} NOT NULL,
  expires ${bigint} NOT NULL,
  PRIMARY KEY (user_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys(expires);
`;
}
