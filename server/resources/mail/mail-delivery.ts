/**
 * Sends the mails queued by mail-outbox.ts: a worker of its own in every
 * process that runs workers (the API servers and `npm run worker`), so
 * that a mail never waits behind an audio analysis. A failed attempt is
 * retried on MAIL_RETRY_DELAYS_MS; a message the mail server refused for
 * good (an SMTP 5xx to the recipient or the data) is not.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import { PermanentJobError, Worker, type JobHandler } from '../../jobs/worker.ts';
import { MailRejectedError, type MailMessage, type Mailer } from '../../mail/mailer.ts';
import { MAIL_RETRY_DELAYS_MS, SEND_MAIL, type MailJobPayload } from './mail-outbox.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'secrets'>;

/** How many mails one process sends at once. */
const MAIL_CONCURRENCY = 2;

export function sendMailHandler(ctx: Ports, mailer: Mailer): JobHandler<Store> {
  return {
    retryDelayMs: (job) => MAIL_RETRY_DELAYS_MS[Math.min(job.attempts, MAIL_RETRY_DELAYS_MS.length) - 1],

    async run({ job }) {
      const payload = job.payload as unknown as MailJobPayload;
      let message: MailMessage;
      try {
        message = JSON.parse(ctx.secrets.open(payload.sealed));
      } catch {
        // Sealed under another signing secret (it changed since), or damaged: no attempt will ever open it.
        throw new PermanentJobError(`The ${payload.mail} mail cannot be opened with this server's signing secret; it is dropped.`);
      }
      try {
        await mailer.send(message);
      } catch (error) {
        if (error instanceof MailRejectedError) throw new PermanentJobError(error.message, 'mail-rejected');
        throw error;
      }
      ctx.logger.info('mail sent', { jobId: job.id, mail: payload.mail });
    },

    async failed(_store, job, reason) {
      // Nothing else to undo: the link it carried stays valid until it expires, and can be asked for again.
      ctx.logger.error('a mail could not be sent, and will not be tried again', { jobId: job.id, mail: (job.payload as { mail?: string }).mail, reason });
    },
  };
}

/**
 * Starts this process's mail sender; none without a mailer (no SMTP_URL).
 * `more` are the jobs that make mails and queue them (notifications'), run by
 * the same worker, so that they run exactly where mail can be sent.
 */
export function startMailWorker(ctx: Ports & Pick<Context, 'mailer'>, more: Record<string, JobHandler<Store>> = {}): Worker<Store> | undefined {
  if (!ctx.mailer) return undefined;
  const worker = new Worker<Store>(
    ctx.store,
    { ...more, [SEND_MAIL]: sendMailHandler(ctx, ctx.mailer) },
    {
      concurrency: MAIL_CONCURRENCY,
      pollMs: ctx.config.jobPollMs,
      leaseMs: ctx.config.jobLeaseMs,
      backoffBaseMs: ctx.config.jobBackoffMs,
      stopGraceMs: Math.min(ctx.config.shutdownGraceMs, 30_000),
      jobLogLevel: 'debug',
    },
    ctx.clock,
    ctx.logger,
  );
  worker.start();
  return worker;
}
