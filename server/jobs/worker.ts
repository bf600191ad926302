/**
 * Runs jobs from the queue: up to `concurrency` at once, polling when idle,
 * renewing each running job's lease while it works so that a long job (a
 * three-hour recording) is not taken for dead.
 *
 * - A handler throws a PermanentJobError for input that will never work;
 *   any other error is retried with exponential backoff until the job's
 *   attempts run out.
 * - Every change a job makes to the queue is fenced on its claim (see
 *   job-queue.ts). A handler's result is applied in the same transaction
 *   that completes the job, so a worker that lost its lease can neither
 *   complete, fail nor renew the job, nor write its result: it logs that
 *   and drops it.
 * - The heartbeat that renews the lease notices when it is lost, and aborts
 *   the job (the handler's AbortSignal), which stops its ffmpeg.
 * - `stop()` waits for the jobs under way for at most a grace period; then
 *   it aborts them and hands them back, for another worker to take at once.
 * - Free slots are filled with one claim (JobQueue.claimMany), and the
 *   completions that arrive together are committed together, each still
 *   fenced on its own claim, in the transaction that claims the jobs to take
 *   their slots: with hundreds of short jobs a second (webhook deliveries),
 *   statements and commits per job were most of their cost.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Job, JobQueue, Queue } from './job-queue.ts';

/**
 * Thrown by a handler for a job that will never succeed. `code` says which
 * way it failed, for the handler's `failed` to act on without reading the
 * message (worded for people, and free to change).
 */
export class PermanentJobError extends Error {
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.name = 'PermanentJobError';
    this.code = code;
  }
}

/** The abort reason when the job's lease was lost: another worker may hold it now. */
export class LeaseLostError extends Error {
  constructor(job: Job) {
    super(`Job ${job.id} lost its lease (attempt ${job.attempts}); its work is dropped.`);
  }
}

/** The abort reason when the worker stops before the job ended: the job is handed back. */
export class WorkerStoppingError extends Error {
  constructor() {
    super('The worker is stopping; the job is handed back.');
  }
}

/** The store a worker needs: the queue, and transactions that change the queue and the job's own data together. */
export interface JobStore<Tx extends { jobs: JobQueue }> {
  readonly jobs: JobQueue;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface JobRun<Tx> {
  readonly job: Job;
  /** Aborted when this worker loses the job's lease or stops; hand it to every long step (ffmpeg takes it). */
  readonly signal: AbortSignal;
  /**
   * Completes the job and applies its result in the same transaction, only
   * while this worker holds the job. False when it lost it: nothing of the
   * result was applied. A handler that returns without calling it completes
   * the job with no result.
   */
  complete(result?: (tx: Tx) => Promise<void>): Promise<boolean>;
}

export interface JobHandler<Tx> {
  run(run: JobRun<Tx>): Promise<void>;
  /**
   * Called in the transaction that gives the job back to the queue: for a
   * retry at `retryAt`, or from a stopping worker (to run again at once).
   */
  requeued?(tx: Tx, job: Job, reason: string, retryAt: number): Promise<void>;
  /** When to retry after failed attempt `job.attempts`, in ms; without it, the worker's exponential backoff. */
  retryDelayMs?(job: Job): number;
  /**
   * Called in the transaction that fails the job for good: permanently (then
   * `code` is the PermanentJobError's), or out of attempts (no `code`).
   */
  failed(tx: Tx, job: Job, reason: string, code: string | undefined): Promise<void>;
}

export interface WorkerOptions {
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  /** Backoff before retry n (1-based): base × 2^(n−1), capped. */
  backoffBaseMs: number;
  /** How long `stop()` lets jobs under way finish before it aborts them and hands them back. */
  stopGraceMs: number;
  /**
   * The level of the start and end of each job: `info` for analyses (minutes
   * each); `debug` for deliveries, hundreds a second, each in its own log
   * that its owner reads through the API.
   */
  jobLogLevel?: 'info' | 'debug';
}

/** How long aborted jobs get to wind down (kill ffmpeg, hand the job back) before `stop()` returns anyway. */
const ABORT_WIND_DOWN_MS = 2000;
const MAX_BACKOFF_MS = 10 * 60_000;

interface Running {
  job: Job;
  controller: AbortController;
  done: Promise<void>;
}

/** A completion waiting for the next group commit. */
interface PendingCompletion<Tx> {
  job: Job;
  result: ((tx: Tx) => Promise<void>) | undefined;
  settle(completed: boolean): void;
  fail(error: unknown): void;
}

export class Worker<Tx extends { jobs: JobQueue } = { jobs: JobQueue }> {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private running = new Set<Running>();
  private stopping = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private abortTimer: NodeJS.Timeout | undefined;
  private abortDeadline = Number.POSITIVE_INFINITY;
  private aborted: () => void = () => {};
  private abortedAll = new Promise<void>((resolve) => (this.aborted = resolve));
  /** The kinds of job it claims: those it has handlers for. */
  private readonly kinds: string[];
  /** Completions asked for since the last group commit began; the next one takes them all. */
  private completions: Array<PendingCompletion<Tx>> = [];
  private committing = false;
  /** Running jobs that asked to complete: they end with their commit, and their slots are free for the next claim. */
  private completing = new Set<Job>();

  private store: JobStore<Tx>;
  private handlers: Record<string, JobHandler<Tx>>;
  private options: WorkerOptions;
  private clock: Clock;
  private logger: Logger;
  /** The queue its jobs are in, over the store or a transaction of it: the jobs table unless told otherwise. */
  private queueOf: (store: JobStore<Tx> | Tx) => Queue;

  constructor(
    store: JobStore<Tx>,
    handlers: Record<string, JobHandler<Tx>>,
    options: WorkerOptions,
    clock: Clock,
    logger: Logger,
    queueOf: (store: JobStore<Tx> | Tx) => Queue = (store) => store.jobs,
  ) {
    this.queueOf = queueOf;
    this.store = store;
    this.handlers = handlers;
    this.options = options;
    this.clock = clock;
    this.logger = logger;
    this.kinds = Object.keys(handlers);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Asks for work now instead of at the next poll (after an enqueue in this process). */
  nudge(): void {
    this.wake?.();
  }

  /** How many jobs are under way. */
  get busy(): number {
    return this.running.size;
  }

  /**
   * Stops claiming, lets the jobs under way finish for at most `graceMs`,
   * then aborts them (killing their ffmpeg) and hands them back to the
   * queue. Resolves once they have wound down, or at the latest
   * ABORT_WIND_DOWN_MS after the abort. Calling it again with a shorter
   * grace brings the abort forward.
   */
  stop(graceMs = this.options.stopGraceMs): Promise<void> {
    this.stopping = true;
    this.wake?.();
    const deadline = Date.now() + graceMs;
    if (deadline < this.abortDeadline) {
      this.abortDeadline = deadline;
      clearTimeout(this.abortTimer);
      this.abortTimer = setTimeout(() => this.abortAll(), graceMs);
    }
    return (this.stopped ??= (async () => {
      // The loop ends at once, or after a claim under way (which it hands back); then the jobs it started wind down.
      const finished = (async () => {
        await this.loop;
        await Promise.allSettled([...this.running].map((entry) => entry.done));
      })();
      await Promise.race([finished, this.abortedAll.then(() => Promise.race([finished, delay(ABORT_WIND_DOWN_MS)]))]);
      clearTimeout(this.abortTimer);
      for (const entry of this.running) {
        this.logger.error('job did not wind down after the worker aborted it; its lease will run out', { jobId: entry.job.id, workerId: this.id });
      }
    })());
  }

  private abortAll(): void {
    for (const entry of this.running) {
      this.logger.warn('job still running at the end of the grace period: aborting it and handing it back', { jobId: entry.job.id, kind: entry.job.kind });
      entry.controller.abort(new WorkerStoppingError());
    }
    this.aborted();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let full = false;
      const free = this.options.concurrency - this.running.size;
      if (free > 0) {
        try {
          const jobs = await this.queueOf(this.store).claimMany(this.id, this.clock.now(), this.options.leaseMs, this.kinds, free);
          // Every slot taken: more may be due at once, to claim when a slot frees (the wait below ends then).
          full = !this.stopping && jobs.length === free;
          await this.beginClaimed(jobs);
        } catch (error) {
          this.logger.error('claiming a job failed', { err: error, workerId: this.id });
        }
      }
      if (!this.stopping && (free <= 0 || !full)) {
        const woken = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), this.options.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        this.wake = undefined;
        // A job ended: those ending with it (one group commit) end in this same moment; the next claim fills all
        // their slots in one statement, not one by one.
        if (woken && this.running.size > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      this.wake = undefined;
    }
  }

  /** Starts the jobs just claimed; if stop was asked while the claim was on its way, gives them straight back. */
  private async beginClaimed(jobs: Job[]): Promise<void> {
    if (!this.stopping) {
      for (const job of jobs) this.begin(job);
      return;
    }
    for (const job of jobs) await this.queueOf(this.store).release(job, this.clock.now());
  }

  private begin(job: Job): void {
    const controller = new AbortController();
    const entry: Running = { job, controller, done: Promise.resolve() };
    entry.done = this.execute(job, controller).finally(() => {
      this.running.delete(entry);
      this.completing.delete(job);
      this.wake?.();
    });
    this.running.add(entry);
  }

  /** Renews the lease every third of it; aborts the job when the lease is lost, or can no longer be confirmed. */
  private heartbeat(job: Job, controller: AbortController): () => void {
    let leaseUntil = job.leaseUntil;
    let renewing = false;
    const timer = setInterval(async () => {
      if (renewing || controller.signal.aborted) return;
      renewing = true;
      try {
        const until = this.clock.now() + this.options.leaseMs;
        if (await this.queueOf(this.store).extend(job, until)) {
          leaseUntil = until;
        } else {
          this.logger.warn('job lost its lease: aborting it', { jobId: job.id, kind: job.kind, attempt: job.attempts, workerId: this.id });
          controller.abort(new LeaseLostError(job));
        }
      } catch (error) {
        this.logger.error('renewing a job lease failed', { err: error, jobId: job.id });
        // Past the end of the lease another worker may take the job: stop working on it.
        if (this.clock.now() >= leaseUntil) controller.abort(new LeaseLostError(job));
      } finally {
        renewing = false;
      }
    }, Math.max(50, this.options.leaseMs / 3));
    return () => clearInterval(timer);
  }

  private async execute(job: Job, controller: AbortController): Promise<void> {
    const handler = this.handlers[job.kind];
    const stopHeartbeat = this.heartbeat(job, controller);
    const log = { jobId: job.id, kind: job.kind, attempt: job.attempts };
    let completed: boolean | undefined;
    const complete = async (result?: (tx: Tx) => Promise<void>): Promise<boolean> => {
      completed = await this.completeInGroup(job, result);
      return completed;
    };
    try {
      if (!handler) throw new PermanentJobError(`No handler for jobs of kind ${job.kind}`);
      if (job.attempts > job.maxAttempts) {
        throw new PermanentJobError(`Processing was interrupted ${job.attempts - 1} times; giving up.`);
      }
      this.logger[this.options.jobLogLevel ?? 'info']('job started', log);
      await handler.run({ job, signal: controller.signal, complete });
      if (completed === undefined) await complete();
      if (completed) this.logger[this.options.jobLogLevel ?? 'info']('job done', log);
      else this.logger.warn('job finished after losing its lease: its result is dropped', { ...log, workerId: this.id });
    } catch (error) {
      await this.settleFailure(job, handler, error, controller.signal);
    } finally {
      stopHeartbeat();
    }
  }

  /**
   * Completes the job and applies its result in one transaction, only while
   * this claim holds it; answers whether it did. Completions asked for while
   * a commit is under way wait for it, then go in one transaction together:
   * each is fenced on its own claim, and one whose claim was lost changes
   * nothing, as alone. If the group's transaction fails, each is tried again
   * in a transaction of its own, so that one bad result fails only its job.
   */
  private completeInGroup(job: Job, result: ((tx: Tx) => Promise<void>) | undefined): Promise<boolean> {
    return new Promise<boolean>((settle, fail) => {
      this.completing.add(job);
      this.completions.push({ job, result, settle, fail });
      if (!this.committing) void this.commitCompletions();
    });
  }

  private async commitCompletions(): Promise<void> {
    this.committing = true;
    try {
      // Those of the same moment (the answers of one batch of deliveries) join the first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.completions.length > 0) {
        // In the order of the job ids, so that two processes' groups take their row locks in one order.
        const group = this.completions.splice(0).sort((a, b) => (a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0));
        // The slots of the jobs that are completing (this group, and those of groups before it that have not yet
        // wound down) are filled in this group's transaction: one commit ends a batch of deliveries and claims the
        // next, where the claim was a commit of its own, and on SQLite a commit cost more than the rows it wrote
        // (8 deliveries claimed: 100 µs in a transaction, 430 µs alone).
        const room = this.stopping ? 0 : this.options.concurrency - this.running.size + this.completing.size;
        let committed: { held: boolean[]; claimed: Job[] } | undefined;
        try {
          committed = await this.store.transaction(async (tx) => {
            const held: boolean[] = [];
            for (const { job, result } of group) held.push(await this.completeIn(tx, job, result));
            const claimed = room > 0 ? await this.queueOf(tx).claimMany(this.id, this.clock.now(), this.options.leaseMs, this.kinds, room) : [];
            return { held, claimed };
          });
        } catch (error) {
          // Alone, the error is its own; in a group, each is tried on its own below, and the one it belongs to gets it.
          if (group.length === 1) {
            group[0].fail(error);
            continue;
          }
        }
        if (committed) {
          // Started (or, by a stopping worker, handed back) before the group's jobs end, which a stop waits for.
          await this.beginClaimed(committed.claimed);
          for (const [i, entry] of group.entries()) entry.settle(committed.held[i]);
          continue;
        }
        for (const entry of group) {
          try {
            entry.settle(await this.store.transaction((tx) => this.completeIn(tx, entry.job, entry.result)));
          } catch (error) {
            entry.fail(error);
          }
        }
      }
    } finally {
      this.committing = false;
    }
  }

  private async completeIn(tx: Tx, job: Job, result: ((tx: Tx) => Promise<void>) | undefined): Promise<boolean> {
    if (!(await this.queueOf(tx).complete(job, this.clock.now()))) return false;
    await result?.(tx);
    return true;
  }

  private async settleFailure(job: Job, handler: JobHandler<Tx> | undefined, error: unknown, signal: AbortSignal): Promise<void> {
    const log = { jobId: job.id, kind: job.kind, attempt: job.attempts, workerId: this.id };
    const now = this.clock.now();
    try {
      if (signal.aborted && signal.reason instanceof LeaseLostError) {
        this.logger.warn('job aborted after losing its lease: its work is dropped', log);
        return;
      }
      if (signal.aborted && signal.reason instanceof WorkerStoppingError) {
        const reason = signal.reason.message;
        const released = await this.store.transaction(async (tx) => {
          if (!(await this.queueOf(tx).release(job, now))) return false;
          await handler?.requeued?.(tx, job, reason, now);
          return true;
        });
        this.logger.info(released ? 'job handed back by the stopping worker' : 'job was lost before the stopping worker could hand it back', log);
        return;
      }
      const reason = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof PermanentJobError || job.attempts >= job.maxAttempts;
      if (error instanceof PermanentJobError) this.logger.warn('job failed for good', { ...log, reason });
      else this.logger.warn('job failed', { ...log, permanent, err: error });
      const settled = await this.store.transaction(async (tx) => {
        if (permanent) {
          if (!(await this.queueOf(tx).fail(job, reason, now, undefined))) return false;
          await handler?.failed(tx, job, reason, error instanceof PermanentJobError ? error.code : undefined);
        } else {
          const retryAt = now + (handler?.retryDelayMs?.(job) ?? Math.min(this.options.backoffBaseMs * 2 ** (job.attempts - 1), MAX_BACKOFF_MS));
          if (!(await this.queueOf(tx).fail(job, reason, now, retryAt))) return false;
          await handler?.requeued?.(tx, job, reason, retryAt);
        }
        return true;
      });
      if (!settled) this.logger.warn('job failed after losing its lease: its failure is dropped', log);
    } catch (settleError) {
      // The lease runs out, and another worker takes the job up again.
      this.logger.error('recording the outcome of a job failed', { ...log, err: settleError });
    }
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
