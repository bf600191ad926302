/**
 * Mail end to end: a real server on each store, sending through nodemailer
 * to a real SMTP server on loopback (server/testing/smtp-sink.ts) that asks
 * for AUTH and parses what it gets. Retries are driven by the test clock,
 * never by waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { until } from '../../testing/until.ts';
import { linkTo, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';
import { MAIL_RETRY_DELAYS_MS, queueMail, SEND_MAIL } from './mail-outbox.ts';
import { passwordResetMail } from '../../mail/templates.ts';

const FROM = 'Audio Share <audio@example.org>';

describe.each(backends)('mail on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: FROM, JOB_POLL_MS: '20' };
  let sink: SmtpSink;
  // Before the server's own beforeAll (hooks run in the order they are declared): it needs the sink's address.
  beforeAll(async () => {
    sink = await startSmtpSink({ user: 'mailer@example.org', password: 'p@ss:word/with%odd' });
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });

  let count = 0;
  /** Queues a reset mail to a new address, in a transaction, as a service would; answers the address, the link and the job. */
  async function queueReset() {
    const to = `person-${count++}@example.com`;
    const url = `${t.server.ctx.config.publicUrl}/reset-password?token=secret-${count}-${Math.random().toString(36).slice(2)}`;
    const ctx = t.server.ctx;
    const jobId = await ctx.store.transaction((store) => queueMail(ctx, store, 'password-reset', passwordResetMail({ to, name: 'Ada <Lovelace>', url, validForMs: 3_600_000 })));
    if (!jobId) throw new Error('no mail was queued');
    return { to, url, jobId };
  }
  const job = (id: string) => t.server.ctx.store.jobs.get(id);

  it('sends a queued mail through the SMTP server, authenticated, from MAIL_FROM, with its text and HTML', async () => {
    expect(t.server.mailWorker).toBeDefined();
    const { to, url, jobId } = await queueReset();
    const mail = await sink.nextTo(to);
    expect(mail.user).toBe('mailer@example.org');
    expect(mail.envelopeFrom).toBe('audio@example.org');
    expect(mail.from).toBe('"Audio Share" <audio@example.org>');
    expect(mail.subject).toBe('Reset your Audio Share password');
    expect(linkTo(mail, '/reset-password').toString()).toBe(url);
    expect(mail.text).toContain('Hello Ada <Lovelace>,');
    expect(mail.html).toContain('Hello Ada &lt;Lovelace&gt;,');
    expect(mail.html).toContain(`href="${url}"`);
    await until(async () => (await job(jobId))?.status === 'done', 'the mail job to be done');
  });

  it('keeps the message sealed in the queue: the link it carries is not in the database', async () => {
    const { to, url, jobId } = await queueReset();
    await sink.nextTo(to);
    const [row] = await t.server.ctx.store.db.query<{ payload: string }>('SELECT payload FROM jobs WHERE id = $1', [jobId]);
    expect(JSON.parse(row.payload).mail).toBe('password-reset');
    expect(row.payload).not.toContain(new URL(url).searchParams.get('token'));
    expect(row.payload).not.toContain(to);
  });

  it('queues nothing when the transaction that asked for the mail rolls back', async () => {
    const ctx = t.server.ctx;
    const to = `rolled-back-${backend}@example.com`;
    let queued: string | undefined;
    await expect(
      ctx.store.transaction(async (store) => {
        queued = await queueMail(ctx, store, 'password-reset', passwordResetMail({ to, name: 'X', url: `${ctx.config.publicUrl}/reset-password?token=x`, validForMs: 3_600_000 }));
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(queued).toBeDefined();
    expect(await job(queued!)).toBeUndefined();
    // A later mail to the same address is the first one the sink gets for it.
    const { url } = await (async () => {
      const url = `${ctx.config.publicUrl}/reset-password?token=after`;
      await ctx.store.transaction((store) => queueMail(ctx, store, 'password-reset', passwordResetMail({ to, name: 'X', url, validForMs: 3_600_000 })));
      return { url };
    })();
    expect(linkTo(await sink.nextTo(to), '/reset-password').toString()).toBe(url);
  });

  it('retries a mail the server refuses for now (451), and delivers it once the server takes mail again', async () => {
    sink.refuse = 'transient';
    const refusedBefore = sink.refusals;
    const { to, url, jobId } = await queueReset();
    try {
      const failed = await until(async () => {
        const state = await job(jobId);
        return state?.status === 'queued' && state.attempts === 1 && state;
      }, 'the first attempt to fail');
      expect(failed.lastError).toContain('451');
      expect(sink.refusals).toBe(refusedBefore + 1);
    } finally {
      sink.refuse = 'no';
    }
    // Not before its retry is due.
    t.server.clock.advance(MAIL_RETRY_DELAYS_MS[0]);
    const mail = await sink.nextTo(to);
    expect(linkTo(mail, '/reset-password').toString()).toBe(url);
    expect(await until(async () => (await job(jobId))?.status === 'done' && job(jobId), 'the job to be done')).toMatchObject({ attempts: 2 });
  });

  it('retries while the SMTP server is down, and delivers once it is back', async () => {
    await sink.stop();
    let jobId: string;
    let to: string;
    try {
      ({ to, jobId } = await queueReset());
      const failed = await until(async () => {
        const state = await job(jobId);
        return state?.status === 'queued' && state.attempts === 1 && state;
      }, 'the first attempt to fail');
      expect(failed.lastError).toMatch(/ECONNREFUSED|connect/i);
      // A second attempt, still down.
      t.server.clock.advance(MAIL_RETRY_DELAYS_MS[0]);
      await until(async () => (await job(jobId))?.attempts === 2 && (await job(jobId))?.status === 'queued', 'the second attempt to fail');
    } finally {
      await sink.start();
    }
    t.server.clock.advance(MAIL_RETRY_DELAYS_MS[1]);
    await sink.nextTo(to);
    await until(async () => (await job(jobId))?.status === 'done', 'the job to be done');
  });

  it('gives a mail up at once when the server refuses it for good (550)', async () => {
    sink.refuse = 'permanent';
    let jobId: string;
    try {
      ({ jobId } = await queueReset());
      const failed = await until(async () => (await job(jobId))?.status === 'failed' && job(jobId), 'the mail to fail for good');
      expect(failed).toMatchObject({ attempts: 1 });
      expect(failed!.lastError).toContain('refused the mail');
    } finally {
      sink.refuse = 'no';
    }
  });
});

describe.each(backends)('a server without SMTP_URL on %s', (backend) => {
  const t = useTestServer(backend);

  it('has no mailer and no mail worker, and queues no mail', async () => {
    const ctx = t.server.ctx;
    expect(ctx.config.mail).toBeUndefined();
    expect(ctx.mailer).toBeUndefined();
    expect(t.server.mailWorker).toBeUndefined();
    const queued = await ctx.store.transaction((store) =>
      queueMail(ctx, store, 'password-reset', passwordResetMail({ to: 'nobody@example.com', name: 'N', url: `${ctx.config.publicUrl}/reset-password?token=x`, validForMs: 3_600_000 })),
    );
    expect(queued).toBeUndefined();
    const [{ n }] = await ctx.store.db.query<{ n: number }>('SELECT COUNT(*) AS n FROM jobs WHERE kind = $1', [SEND_MAIL]);
    expect(Number(n)).toBe(0);
  });
});

describe('an SMTP server that refuses the credentials', () => {
  let sink: SmtpSink;
  const env: Record<string, string> = { MAIL_FROM: FROM, JOB_POLL_MS: '20' };
  beforeAll(async () => {
    sink = await startSmtpSink({ user: 'mailer', password: 'right' });
    env.SMTP_URL = sink.url.replace(':right@', ':wrong@');
  });
  const t = useTestServer('sqlite', env);
  afterAll(async () => {
    await sink.close();
  });

  it('keeps the mail for a later attempt: wrong credentials are the operator’s to fix, not the mail’s fault', async () => {
    const ctx = t.server.ctx;
    const jobId = await ctx.store.transaction((store) =>
      queueMail(ctx, store, 'password-reset', passwordResetMail({ to: 'someone@example.com', name: 'N', url: `${ctx.config.publicUrl}/reset-password?token=x`, validForMs: 3_600_000 })),
    );
    const failed = await until(async () => {
      const state = await ctx.store.jobs.get(jobId!);
      return state?.status === 'queued' && state.attempts === 1 && state;
    }, 'the attempt to fail');
    expect(failed.lastError).toMatch(/535|auth/i);
    expect(sink.received).toHaveLength(0);
  });
});
