/**
 * Migration 29: what the sweeps delete, and what the job queue claims, is
 * found by indexes (issue 23: fast at every size).
 *
 * Every ten minutes the server deletes jobs that ended a week ago and
 * deliveries older than the log's 30 days. Each of those DELETEs scanned its
 * whole table on the one connection every request waits for: 200,000
 * finished jobs took 13 ms to find the few expired ones, and a server sending
 * a hundred deliveries a second keeps 60 million of each. Now each walks an
 * index of what it deletes by (the OAuth records' sweep had one already,
 * migration 25):
 *
 * - jobs_finished: the ended jobs by the time they ended (a partial index:
 *   queued and running jobs are not in it);
 * - webhook_deliveries_by_age: deliveries by their creation, which never
 *   changes, so the index costs one insert per delivery and nothing after.
 *
 * The queue's own indexes (migration 8) held every job, finished ones
 * included, under their status. They now hold only the jobs a claim looks
 * for: jobs_due the queued ones, jobs_leases the running ones (partial
 * indexes; the claims name the status as a literal, which both SQLite and
 * PostgreSQL need to use them). A finished job leaves both, so they stay the
 * size of the work under way, however long the finished jobs are kept.
 */
export function sweepIndexesSchema(): string {
  return `
DROP INDEX jobs_due;
DROP INDEX jobs_leases;
CREATE INDEX jobs_due ON jobs(run_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leases ON jobs(lease_until, id) WHERE status = 'running';
CREATE INDEX jobs_finished ON jobs(time_finished) WHERE status IN ('done', 'failed');
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries(time_created);
`;
}
