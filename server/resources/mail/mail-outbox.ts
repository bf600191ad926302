/**
 * Mail goes out from the durable job queue, never inside a request: a mail
 * is queued in the transaction of what causes it (a reset asked for, an
 * invitation made), so it is sent if and only if that commits, and a mail
 * server that is slow or down delays the mail, retried, and never the
 * answer. Call `queueMail` with the store of that transaction.
 *
 * The job holds the whole message, sealed (server/signing/secret-box.ts):
 * a reset or verification mail carries a single-use secret whose database
 * row keeps only a hash, and the queue keeps finished jobs for a week, so a
 * copy of the database alone must not give a working link.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { MailMessage } from '../../mail/mailer.ts';

export const SEND_MAIL = 'send-mail';

/**
 * When each retry follows a failed attempt: soon at first (a mail server
 * restarting), then further apart, about eight hours in all. A mail later
 * than that is worth little: a reset link lasts an hour, and the person
 * has asked again long before.
 */
export const MAIL_RETRY_DELAYS_MS = [10_000, 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000, 3_600_000, 2 * 3_600_000, 4 * 3_600_000];

/** What the job's payload holds: which mail it is (readable, for whoever looks at the queue) and the sealed message. */
export interface MailJobPayload {
  mail: string;
  sealed: string;
}

/**
 * Queues `message` in `store`'s transaction, and answers its job's id; or
 * answers undefined, queuing nothing, when this server sends no mail (no
 * SMTP_URL): then the caller gives the link another way (the API answer,
 * the admin CLI). `mail` names the kind of mail (password-reset, …).
 */
export async function queueMail(ctx: Pick<Context, 'config' | 'clock' | 'secrets' | 'jobQueued'>, store: Store, mail: string, message: MailMessage): Promise<string | undefined> {
  if (!ctx.config.mail) return undefined;
  const payload: MailJobPayload = { mail, sealed: ctx.secrets.seal(JSON.stringify(message)) };
  const jobId = await store.jobs.enqueue(SEND_MAIL, { ...payload }, { now: ctx.clock.now(), maxAttempts: MAIL_RETRY_DELAYS_MS.length + 1 });
  // Woken once the row is there for it to read: waking it sooner would find nothing, and it would sleep a poll.
  store.afterCommit(() => ctx.jobQueued());
  return jobId;
}
