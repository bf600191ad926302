/**
 * Migration 2: the audio pipeline. Boxes gain their analysis (JSON), and a
 * jobs table holds the durable queue (server/jobs/job-queue.ts).
 */
export function audioPipelineSchema(bigint: string): string {
  return `
ALTER TABLE boxes ADD COLUMN audio TEXT;

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at ${bigint} NOT NULL,
  lease_until ${bigint},
  worker TEXT,
  last_error TEXT,
  time_created ${bigint} NOT NULL,
  time_finished ${bigint}
);
CREATE INDEX jobs_ready ON jobs(status, run_at);
`;
}
