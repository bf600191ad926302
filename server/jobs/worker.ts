/**
 * Runs jobs from the queue: up to `concurrency` at once, polling when idle,
 * extending each running job's lease while it works so that a long job (a
 * three-hour recording) is not taken for dead. A handler throws a
 * PermanentJobError for input that will never work; any other error is
 * retried with exponential backoff until the job's attempts run out.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../http/logger.ts';
import type { Job, JobQueue } from './job-queue.ts';

export class PermanentJobError extends Error {}

export interface JobHandler {
  run(job: Job): Promise<void>;
  /** Called once a job has failed for good (permanently, or out of attempts). */
  failed(job: Job, reason: string): Promise<void>;
}

export interface WorkerOptions {
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  /** Backoff before retry n (1-based): base × 2^(n−1), capped. */
  backoffBaseMs: number;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private running = new Set<Promise<void>>();
  private stopping = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private queue: JobQueue,
    private handlers: Record<string, JobHandler>,
    private options: WorkerOptions,
    private clock: Clock,
    private logger: Logger,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Asks for work now instead of at the next poll (after an enqueue in this process). */
  nudge(): void {
    this.wake?.();
  }

  /** Stops claiming, and waits for the jobs under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await Promise.allSettled(this.running);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let claimed = false;
      if (this.running.size < this.options.concurrency) {
        try {
          const job = await this.queue.claim(this.id, this.clock.now(), this.options.leaseMs);
          if (job) {
            claimed = true;
            const work = this.execute(job).finally(() => {
              this.running.delete(work);
              this.wake?.();
            });
            this.running.add(work);
          }
        } catch (error) {
          this.logger.error('job claim failed', { error: String(error) });
        }
      }
      if (!claimed) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers[job.kind];
    const heartbeat = setInterval(() => {
      this.queue.extend(job, this.id, this.clock.now() + this.options.leaseMs).catch(() => {});
    }, Math.max(50, this.options.leaseMs / 3));
    try {
      if (!handler) throw new PermanentJobError(`No handler for jobs of kind ${job.kind}`);
      if (job.attempts > job.maxAttempts) {
        throw new PermanentJobError(`Processing was interrupted ${job.attempts - 1} times; giving up.`);
      }
      this.logger.info('job started', { jobId: job.id, kind: job.kind, attempt: job.attempts });
      await handler.run(job);
      await this.queue.complete(job, this.clock.now());
      this.logger.info('job done', { jobId: job.id, kind: job.kind });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof PermanentJobError || job.attempts >= job.maxAttempts;
      const retryAt = permanent ? undefined : this.clock.now() + Math.min(this.options.backoffBaseMs * 2 ** (job.attempts - 1), 10 * 60_000);
      this.logger.warn('job failed', { jobId: job.id, kind: job.kind, attempt: job.attempts, permanent, reason });
      await this.queue.fail(job, reason, this.clock.now(), retryAt).catch(() => {});
      if (permanent && handler) await handler.failed(job, reason).catch((e) => this.logger.error('job failure handler failed', { error: String(e) }));
    } finally {
      clearInterval(heartbeat);
    }
  }
}
