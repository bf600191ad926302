/**
 * Migration 32: webhook deliveries are their own queue (issue 32: "the
 * delivery row is the job"). A delivery had a row in `jobs` beside it, and
 * each attempt read the delivery, then changed both rows: a second row per
 * event and subscription to write in the change's transaction, and a claim
 * of that other table, its two indexes and a commit of its own for each
 * batch of deliveries sent. Now the delivery row carries its place in the
 * queue (server/resources/webhooks/delivery-queue.ts):
 *
 * - due_at: when it may be claimed next, its next attempt while it waits and
 *   the end of its lease while a worker holds it; NULL once it is settled
 *   (succeeded, failed for good, cancelled). One partial index holds only
 *   the rows with work left, in the order a claim takes them, so it stays
 *   the size of the work under way however long the log is kept;
 * - worker and claims: who holds it, and how many claims it has had (never
 *   reset), which together fence a claim as jobs.worker and jobs.attempts do;
 * - tries: the claims since it was queued or redelivered, the place in the
 *   retry schedule (what jobs.attempts was for a delivery's job).
 *
 * The deliveries that still have a job waiting or running take that job's
 * place: a waiting one is due when the job was, a running one when its lease
 * ends (then it is claimed again, as its job would have been); and the jobs
 * go. Their payload is `{"deliveryId":"<id>"}` (JSON.stringify of it), so
 * the id is the text between its 16th character and its last two.
 */
export function deliveryQueueSchema(bigint: string): string {
  return `
ALTER TABLE webhook_deliveries ADD COLUMN due_at ${bigint};
ALTER TABLE webhook_deliveries ADD COLUMN worker TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN claims INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_deliveries SET
  due_at = CASE WHEN jobs.status = 'running' THEN jobs.lease_until ELSE jobs.run_at END,
  claims = jobs.attempts,
  tries = jobs.attempts
FROM jobs
WHERE jobs.kind = 'deliver-webhook' AND jobs.status IN ('queued', 'running')
  AND webhook_deliveries.id = substr(jobs.payload, 16, length(jobs.payload) - 17)
  AND webhook_deliveries.status = 'pending';
DELETE FROM jobs WHERE kind = 'deliver-webhook';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(due_at, id) WHERE due_at IS NOT NULL;
`;
}
