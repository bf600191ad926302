/**
 * The worker against a real queue, on both stores: a job whose lease is lost
 * is aborted and its result dropped; stop() is bounded by its grace period
 * and hands interrupted jobs back; failures are retried or failed for good,
 * each with the handler's hook in the same transaction.
 */
import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../testing/databases.ts';
import { systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Store } from '../repositories.ts';
import { LeaseLostError, PermanentJobError, Worker, WorkerStoppingError, type JobHandler, type JobRun, type WorkerOptions } from './worker.ts';
import { eventually } from '../testing/audio.ts';

interface Entry {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

function capturingLogger(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const log = (level: string) => (message: string, fields: Record<string, unknown> = {}) => entries.push({ level, message, fields });
  return { entries, enabled: () => true, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A handler whose runs the test drives: each run waits until the test settles it, or its signal aborts. */
function drivenHandler() {
  const runs: Array<JobRun<Store> & { settle(outcome: 'complete' | Error): void; ended: Promise<{ completed?: boolean; error?: unknown }> }> = [];
  const hooks: Array<{ hook: 'requeued' | 'failed'; jobId: string; reason: string }> = [];
  const handler: JobHandler<Store> = {
    run(run) {
      let settle: (outcome: 'complete' | Error) => void = () => {};
      const outcome = new Promise<'complete' | Error>((resolve) => (settle = resolve));
      const aborted = new Promise<never>((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason), { once: true }));
      let ended: (value: { completed?: boolean; error?: unknown }) => void = () => {};
      const entry = { ...run, settle, ended: new Promise<{ completed?: boolean; error?: unknown }>((resolve) => (ended = resolve)) };
      runs.push(entry);
      return (async () => {
        try {
          const result = await Promise.race([outcome, aborted]);
          if (result instanceof Error) throw result;
          // The result: a row the test can look for, written only with the completion.
          const completed = await run.complete((tx) => tx.db.execute(`UPDATE jobs SET last_error = 'result applied' WHERE id = $1`, [run.job.id]).then(() => {}));
          ended({ completed });
        } catch (error) {
          ended({ error });
          throw error;
        }
      })();
    },
    async requeued(tx, job, reason) {
      hooks.push({ hook: 'requeued', jobId: job.id, reason });
      await tx.db.execute(`UPDATE jobs SET payload = '{"requeued":true}' WHERE id = $1`, [job.id]);
    },
    async failed(tx, job, reason) {
      hooks.push({ hook: 'failed', jobId: job.id, reason });
      await tx.db.execute(`UPDATE jobs SET payload = '{"failed":true}' WHERE id = $1`, [job.id]);
    },
  };
  return { handler, runs, hooks };
}

const options: WorkerOptions = { concurrency: 2, pollMs: 20, leaseMs: 300, backoffBaseMs: 60_000, stopGraceMs: 30_000 };

describe.each(backends)('worker on %s', (backend) => {
  const t = useTestStore(backend);
  const setUp = async (overrides: Partial<WorkerOptions> = {}) => {
    await t.store.db.execute('DELETE FROM jobs');
    const driven = drivenHandler();
    const logger = capturingLogger();
    const worker = new Worker<Store>(t.store, { test: driven.handler }, { ...options, ...overrides }, systemClock, logger);
    return { ...driven, logger, worker };
  };
  const row = async (id: string) =>
    (await t.store.db.query<{ status: string; worker: string | null; attempts: number; last_error: string | null; payload: string }>(
      'SELECT status, worker, attempts, last_error, payload FROM jobs WHERE id = $1',
      [id],
    ))[0];

  it('aborts a job whose lease another worker took, and neither completes it nor applies its result', async () => {
    const { worker, runs, logger } = await setUp();
    const id = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    worker.start();
    try {
      await eventually(() => runs.length === 1, 'the job runs');
      // As if this worker had stalled past its lease: another takes the job.
      const thief = await t.store.jobs.claim('thief', Date.now() + 60_000, 60_000, ['test']);
      expect(thief).toMatchObject({ id, attempts: 2 });
      // The heartbeat (every 100 ms) notices, and aborts the run.
      const ended = await runs[0].ended;
      expect(ended.error).toBeInstanceOf(LeaseLostError);
      expect(runs[0].signal.aborted).toBe(true);
      await eventually(() => worker.busy === 0, 'the worker has let the job go');
      // The job is the thief's, untouched: no result, no failure, no hook.
      expect(await row(id)).toEqual({ status: 'running', worker: 'thief', attempts: 2, last_error: null, payload: '{}' });
      expect(logger.entries.map((entry) => entry.message)).toContain('job lost its lease: aborting it');
    } finally {
      await worker.stop(0);
    }
  });

  it('drops the result of a job that finishes after losing its lease', async () => {
    // A lease the heartbeat cannot keep up with (renewed every 50 ms at most), so the job can be stolen between two beats.
    const { worker, runs, logger } = await setUp({ leaseMs: 60_000 });
    const id = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    worker.start();
    try {
      await eventually(() => runs.length === 1, 'the job runs');
      await t.store.jobs.claim('thief', Date.now() + 120_000, 60_000, ['test']);
      runs[0].settle('complete');
      expect(await runs[0].ended).toEqual({ completed: false });
      await eventually(() => worker.busy === 0, 'the worker has let the job go');
      expect(await row(id)).toMatchObject({ status: 'running', worker: 'thief', last_error: null });
      expect(logger.entries.map((entry) => entry.message)).toContain('job finished after losing its lease: its result is dropped');
    } finally {
      await worker.stop(0);
    }
  });

  it('completes a job and applies its result in one transaction while it holds the lease', async () => {
    const { worker, runs } = await setUp();
    const id = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    worker.start();
    try {
      await eventually(() => runs.length === 1, 'the job runs');
      runs[0].settle('complete');
      expect(await runs[0].ended).toEqual({ completed: true });
      await eventually(async () => (await row(id)).status === 'done', 'the job is done');
      expect(await row(id)).toMatchObject({ status: 'done', attempts: 1, last_error: 'result applied' });
    } finally {
      await worker.stop(0);
    }
  });

  it('stops within its grace period while a job runs on, aborting it and handing it back for another worker at once', async () => {
    const { worker, runs, hooks, logger } = await setUp();
    const id = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    worker.start();
    await eventually(() => runs.length === 1, 'the job runs');
    const started = Date.now();
    await worker.stop(300);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(300 + 1000);
    expect((await runs[0].ended).error).toBeInstanceOf(WorkerStoppingError);
    // Handed back: queued, its attempt not counted, the handler's hook applied in the same transaction.
    expect(await row(id)).toEqual({ status: 'queued', worker: null, attempts: 0, last_error: null, payload: '{"requeued":true}' });
    expect(hooks).toEqual([{ hook: 'requeued', jobId: id, reason: new WorkerStoppingError().message }]);
    expect(logger.entries.filter((entry) => entry.level === 'error')).toEqual([]);
    // Another worker takes it now, not when the lease would have run out.
    expect(await t.store.jobs.claim('next', Date.now(), 60_000, ['test'])).toMatchObject({ id, attempts: 1 });
  });

  it('lets a job that ends within the grace period finish, and claims nothing more', async () => {
    const { worker, runs } = await setUp();
    const first = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    worker.start();
    await eventually(() => runs.length === 1, 'the job runs');
    const stopped = worker.stop(30_000);
    const second = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    runs[0].settle('complete');
    await stopped;
    expect((await row(first)).status).toBe('done');
    expect((await row(second)).status).toBe('queued');
    expect(runs).toHaveLength(1);
  });

  it('retries a failed job with backoff and fails a permanent one for good, each with its hook, logging the error itself', async () => {
    const { worker, runs, hooks, logger } = await setUp();
    const passing = await t.store.jobs.enqueue('test', {}, { now: Date.now() });
    const hopeless = await t.store.jobs.enqueue('test', {}, { now: Date.now() + 1 });
    worker.start();
    try {
      await eventually(() => runs.length === 2, 'both jobs run');
      const trouble = new Error('the disk is full');
      runs.find((run) => run.job.id === passing)!.settle(trouble);
      runs.find((run) => run.job.id === hopeless)!.settle(new PermanentJobError('not audio'));
      await eventually(() => worker.busy === 0, 'both have ended');
      expect(await row(passing)).toMatchObject({ status: 'queued', attempts: 1, last_error: 'the disk is full', payload: '{"requeued":true}' });
      expect(await row(hopeless)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'not audio', payload: '{"failed":true}' });
      expect(hooks).toEqual(expect.arrayContaining([{ hook: 'requeued', jobId: passing, reason: 'the disk is full' }, { hook: 'failed', jobId: hopeless, reason: 'not audio' }]));
      // Not before its backoff (60 s here).
      const [{ run_at: runAt }] = await t.store.db.query<{ run_at: number }>('SELECT run_at FROM jobs WHERE id = $1', [passing]);
      expect(Number(runAt)).toBeGreaterThan(Date.now() + 50_000);
      // The error object itself is logged, with its stack, not a string of it.
      expect(logger.entries.find((entry) => entry.message === 'job failed')?.fields.err).toBe(trouble);
    } finally {
      await worker.stop(0);
    }
  });

  it('claims free slots together and commits completions together, each fenced on its own claim: one bad result fails only its job', async () => {
    await t.store.db.execute('DELETE FROM jobs');
    const started: string[] = [];
    let release: () => void = () => {};
    const together = new Promise<void>((resolve) => (release = resolve));
    const handler: JobHandler<Store> = {
      async run({ job, complete }) {
        started.push(job.id);
        if (started.length === 3) release();
        // All three complete in the same moment, so that their completions share one group commit.
        await together;
        const bad = (job.payload as { bad?: boolean }).bad === true;
        await complete(async (tx) => {
          await tx.db.execute(`UPDATE jobs SET last_error = 'result applied' WHERE id = $1`, [job.id]);
          if (bad) throw new Error('this result cannot be applied');
        });
      },
      async failed() {},
    };
    const ids = [
      await t.store.jobs.enqueue('test', {}, { now: Date.now() - 2 }),
      await t.store.jobs.enqueue('test', { bad: true }, { now: Date.now() - 1 }),
      await t.store.jobs.enqueue('test', {}, { now: Date.now() }),
    ];
    const worker = new Worker<Store>(t.store, { test: handler }, { ...options, concurrency: 3 }, systemClock, capturingLogger());
    worker.start();
    try {
      const ended = (job: { status: string; last_error: string | null }) => job.status === 'done' || job.last_error === 'this result cannot be applied';
      await eventually(async () => (await Promise.all(ids.map(row))).every(ended), 'the three jobs to end');
      // One claim took the three, in the order they fell due.
      expect(started).toEqual(ids);
      const [good, bad, other] = await Promise.all(ids.map(row));
      expect(good).toMatchObject({ status: 'done', last_error: 'result applied' });
      expect(other).toMatchObject({ status: 'done', last_error: 'result applied' });
      // Its result rolled back with it: the job is given back for a retry, with the error.
      expect(bad).toMatchObject({ status: 'queued', attempts: 1, last_error: 'this result cannot be applied' });
    } finally {
      await worker.stop(0);
    }
  });

  it('claims the jobs that take the freed slots in the transaction that completes the jobs before them, not in a commit of its own', async () => {
    await t.store.db.execute('DELETE FROM jobs');
    const started: string[] = [];
    const handler: JobHandler<Store> = {
      async run({ job, complete }) {
        started.push(job.id);
        await complete();
      },
      async failed() {},
    };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await t.store.jobs.enqueue('test', {}, { now: Date.now() - 10 + i }));
    // The claims the worker makes outside a transaction: a transaction's queue is another object.
    const claimMany = t.store.jobs.claimMany.bind(t.store.jobs);
    let alone = 0;
    t.store.jobs.claimMany = (...args) => {
      alone++;
      return claimMany(...args);
    };
    // A poll far longer than the test: each job after the first can only be claimed when a slot frees.
    const worker = new Worker<Store>(t.store, { test: handler }, { ...options, concurrency: 1, pollMs: 60_000 }, systemClock, capturingLogger());
    worker.start();
    try {
      await eventually(async () => (await Promise.all(ids.map(row))).every((job) => job.status === 'done'), 'the five jobs to be done');
      expect(started).toEqual(ids);
      // The first claim, and at most the one that finds the queue empty after the last: the other four came with a completion.
      expect(alone).toBeLessThanOrEqual(2);
    } finally {
      await worker.stop(0);
      t.store.jobs.claimMany = claimMany;
    }
  });
});
