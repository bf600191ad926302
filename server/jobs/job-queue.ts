/**
 * A durable job queue in the database: one table, the same on SQLite and
 * PostgreSQL. A job is claimed with a lease; a worker that dies (or hangs)
 * lets its lease run out, and the job is claimed again. On PostgreSQL the
 * claim skips rows other workers hold (FOR UPDATE SKIP LOCKED), so workers
 * in several processes never take the same job; on SQLite the claim is one
 * UPDATE … RETURNING, which the database serialises.
 *
 * Every claim is fenced: it is known by the worker that made it and the
 * attempt number it got (each claim adds one). Renewing, completing,
 * failing and handing back a job succeed only for that claim, so a worker
 * whose lease ran out, and whose job another worker took, can change
 * nothing: those calls answer false and it drops its result.
 */
import type { Db } from '../store/db.ts';
import { newId } from '../lib/ids.ts';

export interface Job<P = Record<string, unknown>> {
  id: string;
  kind: string;
  payload: P;
  /** This claim's attempt number (1 for the first claim); with `worker`, it fences the claim. */
  attempts: number;
  maxAttempts: number;
  leaseUntil: number;
  /** The worker that holds this claim. */
  worker: string;
}

type JobRow = { id: string; kind: string; payload: string; attempts: number; max_attempts: number; lease_until: number; worker: string };

/**
 * What a worker (worker.ts) needs of a queue: the jobs table below, or a
 * table whose rows are their own jobs (webhook deliveries,
 * server/resources/webhooks/delivery-queue.ts). Each call but the claim is
 * fenced on the claim that `job` is, and answers false, changing nothing,
 * when that claim no longer holds it.
 */
export interface Queue<J extends Job = Job> {
  /** Takes up to `max` jobs of `kinds` that are due, or whose lease ran out, for `leaseMs`. */
  claimMany(worker: string, now: number, leaseMs: number, kinds: readonly string[], max: number): Promise<J[]>;
  extend(job: J, until: number): Promise<boolean>;
  complete(job: J, now: number): Promise<boolean>;
  /** To run again at `retryAt`; with none, failed for good. */
  fail(job: J, error: string, now: number, retryAt: number | undefined): Promise<boolean>;
  /** Handed back untried, to run again at once; the attempt is not counted. */
  release(job: J, now: number): Promise<boolean>;
}

/** The WHERE clause that matches a job only while this claim holds it ($1 id, $2 worker, $3 attempt). */
const HELD = `id = $1 AND worker = $2 AND attempts = $3 AND status = 'running'`;

export class JobQueue implements Queue {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async enqueue(kind: string, payload: Record<string, unknown>, options: { now: number; maxAttempts?: number }): Promise<string> {
    const id = newId('job');
    await this.db.execute(
      `INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, time_created) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $5)`,
      [id, kind, JSON.stringify(payload), options.maxAttempts ?? 5, options.now],
    );
    return id;
  }

  /**
   * Takes the next job of one of `kinds` that is due, or whose lease ran
   * out, for `leaseMs`. Each worker names its kinds, so that deliveries of
   * webhooks never wait behind an hour of audio analysis.
   */
  async claim(worker: string, now: number, leaseMs: number, kinds: readonly string[]): Promise<Job | undefined> {
    return (await this.claimMany(worker, now, leaseMs, kinds, 1))[0];
  }

  /**
   * Takes up to `max` jobs at once, as `claim` takes one: a worker with
   * several free slots fills them with one statement, not one per job.
   * Those whose lease ran out come first, then the due ones in the order
   * they fell due.
   */
  async claimMany(worker: string, now: number, leaseMs: number, kinds: readonly string[], max: number): Promise<Job[]> {
    // Two simple claims, not one with an OR: each walks its own index in order and stops after `max` rows, where an
    // OR would gather every due row and sort them, once per claim, and a backlog of thousands made that quadratic.
    // Jobs whose lease ran out come first: they are the older work, and few.
    const lapsed = await this.claimWhere(`status = 'running' AND lease_until < $1`, 'lease_until', worker, now, leaseMs, kinds, max);
    if (lapsed.length >= max) return lapsed;
    return [...lapsed, ...(await this.claimWhere(`status = 'queued' AND run_at <= $1`, 'run_at', worker, now, leaseMs, kinds, max - lapsed.length))];
  }

  private async claimWhere(due: string, order: string, worker: string, now: number, leaseMs: number, kinds: readonly string[], max: number): Promise<Job[]> {
    // A read first: an UPDATE that finds nothing still takes the write lock and commits (on SQLite ten times the
    // cost of this look), and the lapsed leases it looks for are nearly always none, as is a due job when idle.
    const probeKinds = kinds.map((_, i) => `$${i + 2}`).join(', ');
    const [any] = await this.db.query(`SELECT 1 AS due FROM jobs WHERE ${due} AND kind IN (${probeKinds}) LIMIT 1`, [now, ...kinds]);
    if (!any) return [];
    const lock = this.db.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    const kindList = kinds.map((_, i) => `$${i + 5}`).join(', ');
    // RETURNING keeps no order: each row's rank comes back with it (the lapsed ones' old lease is overwritten, so
    // they go by age), and the batch is put back in order here.
    const rows = await this.db.query<JobRow & { rank: number }>(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $2, worker = $3
       WHERE id IN (
         SELECT id FROM jobs
         WHERE ${due} AND kind IN (${kindList})
         ORDER BY ${order}, id LIMIT $4 ${lock}
       )
       RETURNING id, kind, payload, attempts, max_attempts, lease_until, worker, ${order === 'run_at' ? 'run_at' : 'time_created'} AS rank`,
      [now, now + leaseMs, worker, max, ...kinds],
    );
    if (rows.length > 1) rows.sort((a, b) => Number(a.rank) - Number(b.rank) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      payload: JSON.parse(row.payload),
      attempts: row.attempts,
      maxAttempts: row.max_attempts,
      leaseUntil: row.lease_until,
      worker: row.worker,
    }));
  }

  /** Extends the lease of a job this claim still holds; false when it was lost. */
  async extend(job: Job, until: number): Promise<boolean> {
    return (await this.db.execute(`UPDATE jobs SET lease_until = $4 WHERE ${HELD}`, [job.id, job.worker, job.attempts, until])) === 1;
  }

  /** Marks the job done; false (and nothing changed) when this claim no longer holds it. */
  async complete(job: Job, now: number): Promise<boolean> {
    return (
      (await this.db.execute(`UPDATE jobs SET status = 'done', lease_until = NULL, time_finished = $4 WHERE ${HELD}`, [job.id, job.worker, job.attempts, now])) === 1
    );
  }

  /**
   * Gives the job back to run again at `retryAt`, or, with none, fails it for
   * good. False (and nothing changed) when this claim no longer holds it.
   */
  async fail(job: Job, error: string, now: number, retryAt: number | undefined): Promise<boolean> {
    const message = error.slice(0, 2000);
    const changed =
      retryAt === undefined
        ? await this.db.execute(`UPDATE jobs SET status = 'failed', lease_until = NULL, last_error = $4, time_finished = $5 WHERE ${HELD}`, [
            job.id,
            job.worker,
            job.attempts,
            message,
            now,
          ])
        : await this.db.execute(`UPDATE jobs SET status = 'queued', lease_until = NULL, last_error = $4, run_at = $5 WHERE ${HELD}`, [
            job.id,
            job.worker,
            job.attempts,
            message,
            retryAt,
          ]);
    return changed === 1;
  }

  /**
   * Hands a job back untried, for another worker to take at once: a stopping
   * worker does this with the jobs it interrupts. The attempt is not counted,
   * since the job did not fail. False when this claim no longer holds it.
   */
  async release(job: Job, now: number): Promise<boolean> {
    return (
      (await this.db.execute(`UPDATE jobs SET status = 'queued', lease_until = NULL, worker = NULL, attempts = attempts - 1, run_at = $4 WHERE ${HELD}`, [
        job.id,
        job.worker,
        job.attempts,
        now,
      ])) === 1
    );
  }

  /** Deletes jobs that ended (done or failed for good) before `before`; answers how many. */
  async pruneFinished(before: number): Promise<number> {
    return this.db.execute(`DELETE FROM jobs WHERE status IN ('done', 'failed') AND time_finished < $1`, [before]);
  }

  async get(id: string): Promise<{ status: string; attempts: number; lastError: string | null } | undefined> {
    const [row] = await this.db.query<{ status: string; attempts: number; last_error: string | null }>('SELECT status, attempts, last_error FROM jobs WHERE id = $1', [id]);
    return row && { status: row.status, attempts: row.attempts, lastError: row.last_error };
  }
}
