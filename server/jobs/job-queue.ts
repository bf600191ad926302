/**
 * A durable job queue in the database: one table, the same on SQLite and
 * PostgreSQL. A job is claimed with a lease; a worker that dies (or hangs)
 * lets its lease run out, and the job is claimed again. On PostgreSQL the
 * claim skips rows other workers hold (FOR UPDATE SKIP LOCKED), so workers
 * in several processes never take the same job; on SQLite the claim is one
 * UPDATE … RETURNING, which the database serialises.
 */
import type { Db } from '../store/db.ts';
import { newId } from '../lib/ids.ts';

export interface Job<P = Record<string, unknown>> {
  id: string;
  kind: string;
  payload: P;
  attempts: number;
  maxAttempts: number;
  leaseUntil: number;
}

type JobRow = { id: string; kind: string; payload: string; attempts: number; max_attempts: number; lease_until: number };

export class JobQueue {
  constructor(private db: Db) {}

  async enqueue(kind: string, payload: Record<string, unknown>, options: { now: number; maxAttempts?: number }): Promise<string> {
    const id = newId('job');
    await this.db.execute(
      `INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, time_created) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $5)`,
      [id, kind, JSON.stringify(payload), options.maxAttempts ?? 5, options.now],
    );
    return id;
  }

  /** Takes the next job that is due, or whose lease ran out, for `leaseMs`. */
  async claim(worker: string, now: number, leaseMs: number): Promise<Job | undefined> {
    const lock = this.db.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    const [row] = await this.db.query<JobRow>(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $2, worker = $3
       WHERE id = (
         SELECT id FROM jobs
         WHERE (status = 'queued' AND run_at <= $1) OR (status = 'running' AND lease_until < $1)
         ORDER BY run_at, id LIMIT 1 ${lock}
       )
       RETURNING id, kind, payload, attempts, max_attempts, lease_until`,
      [now, now + leaseMs, worker],
    );
    return row && { id: row.id, kind: row.kind, payload: JSON.parse(row.payload), attempts: row.attempts, maxAttempts: row.max_attempts, leaseUntil: row.lease_until };
  }

  /** Extends the lease of a job still held by this worker; false when it was lost. */
  async extend(job: Job, worker: string, until: number): Promise<boolean> {
    return (await this.db.execute(`UPDATE jobs SET lease_until = $3 WHERE id = $1 AND worker = $2 AND status = 'running'`, [job.id, worker, until])) === 1;
  }

  async complete(job: Job, now: number): Promise<void> {
    await this.db.execute(`UPDATE jobs SET status = 'done', lease_until = NULL, time_finished = $2 WHERE id = $1`, [job.id, now]);
  }

  /** Gives the job back to run again at `retryAt`, or, with none, fails it for good. */
  async fail(job: Job, error: string, now: number, retryAt: number | undefined): Promise<void> {
    const message = error.slice(0, 2000);
    if (retryAt === undefined) {
      await this.db.execute(`UPDATE jobs SET status = 'failed', lease_until = NULL, last_error = $2, time_finished = $3 WHERE id = $1`, [job.id, message, now]);
    } else {
      await this.db.execute(`UPDATE jobs SET status = 'queued', lease_until = NULL, last_error = $2, run_at = $3 WHERE id = $1`, [job.id, message, retryAt]);
    }
  }

  async get(id: string): Promise<{ status: string; attempts: number; lastError: string | null } | undefined> {
    const [row] = await this.db.query<{ status: string; attempts: number; last_error: string | null }>('SELECT status, attempts, last_error FROM jobs WHERE id = $1', [id]);
    return row && { status: row.status, attempts: row.attempts, lastError: row.last_error };
  }
}
