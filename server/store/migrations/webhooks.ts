/**
 * Migration 8: webhooks. A subscription belongs to a user and carries its
 * signing secrets sealed (server/signing/secret-box.ts), never in the clear.
 * A delivery is one event for one subscription: the exact body that is
 * signed and sent on every attempt, under one id (its `webhook-id`), with
 * the attempts so far as JSON. Deliveries are written in the transaction
 * that makes the change they report, together with the job that sends them
 * (jobs table, migration 2): that is the outbox.
 *
 * Deliveries make the job queue busy (hundreds of jobs a second), so its
 * claims get indexes they can walk in order: one for due jobs, one for
 * lapsed leases, each ending with the id that breaks ties.
 */
export function webhooksSchema(bigint: string): string {
  return `
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  disabled_reason TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires ${bigint},
  secret_rotated ${bigint},
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL
);
CREATE INDEX webhooks_by_user ON webhooks(user_id, time_created, id);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts TEXT NOT NULL,
  next_attempt ${bigint},
  time_created ${bigint} NOT NULL
);
DROP INDEX jobs_ready;
CREATE INDEX jobs_due ON jobs(status, run_at, id);
CREATE INDEX jobs_leases ON jobs(status, lease_until, id);

CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, time_created, id);
`;
}
