/**
 * Starts the whole server from a configuration: opens the store (applying
 * migrations) and the blob store, builds the app and listens. Used by
 * main.ts, the tests and the benchmarks alike.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Config } from './config.ts';
import type { Context } from './context.ts';
import type { Store } from './repositories.ts';
import { createApp } from './app.ts';
import { createContext } from './open-context.ts';
import { startWebhookWorker } from './resources/webhooks/webhook-delivery.ts';
import { analysisEvents } from './resources/uploads/upload-events.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import { clientErrorAnswer, maxHeaderSize } from './http/client-error.ts';
import type { MediaTools } from './audio/media-tools.ts';
import { startAudioWorker } from './resources/processing/audio-worker.ts';
import { sweepAbandonedUploads } from './resources/uploads/uploads-service.ts';
import type { Worker } from './jobs/worker.ts';
import { DELIVERY_LOG_MS } from './resources/webhooks/webhooks-service.ts';
import { sweepAbandonedPortalUploads } from './resources/portal/portal-sweeper.ts';
import { sweepAbandonedProjectUploads } from './resources/project-uploads/project-upload-sweeper.ts';
import { startMailWorker } from './resources/mail/mail-delivery.ts';
import { notificationMailJobs } from './resources/notifications/notifications-service.ts';

/** How long jobs that ended stay in the queue's table, for someone looking into what happened. */
const FINISHED_JOBS_KEPT_MS = 7 * 24 * 3_600_000;

export interface RunningServer {
  ctx: Context;
  /** The audio worker running in this process, if any. */
  worker: Worker<Store> | undefined;
  /** This process's webhook sender; none with WEBHOOK_CONCURRENCY=0. */
  webhookWorker: Worker<Store> | undefined;
  /** This process's mail sender; none without SMTP_URL. */
  mailWorker: Worker<Store> | undefined;
  http: Server;
  /**
   * Runs the periodic sweep now, as its timer does every ten minutes: for
   * the tests, which move the clock past an expiry and then look.
   */
  sweep(): Promise<void>;
  /** The address it listens at, for example http://127.0.0.1:8080. */
  address: string;
  /**
   * Stops taking connections and drains: idle keep-alive connections are
   * closed at once, each request under way (uploads too) is answered with
   * `Connection: close` and its connection closed when it is done. What is
   * still open when the grace time ends is cut. Then the store is closed.
   */
  close(): Promise<void>;
}

export async function startServer(config: Config, overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {}): Promise<RunningServer> {
  let worker: Worker<Store> | undefined;
  let webhookWorker: Worker<Store> | undefined;
  let mailWorker: Worker<Store> | undefined;
  const ctx = await createContext(config, overrides, () => {
    worker?.nudge();
    webhookWorker?.nudge();
    mailWorker?.nudge();
  });
  const store = ctx.store;
  if (config.processing === 'in-process') worker = await startAudioWorker(ctx, analysisEvents(ctx));
  // Deliveries are light (one HTTP request each), so every server process sends them, whatever PROCESSING says.
  if (config.webhooks.concurrency > 0) webhookWorker = startWebhookWorker(ctx);
  // Mail, like deliveries, goes out from every server process; a process without SMTP_URL sends none.
  mailWorker = startMailWorker(ctx, notificationMailJobs(ctx));
  // Every ten minutes, and once at start, remove files whose upload URL expired unused, and what the queue and the
  // webhook log no longer need: jobs that ended a week ago, deliveries older than the log's 30 days; the OAuth
  // server's records (codes, tokens, interactions, grants) past their expiry, which nothing reads any more; and the
  // webhooks of grants that ended by time (a year unrenewed), which end with their grant (issue 28).
  const sweep = async () => {
    await sweepAbandonedUploads(ctx).catch((error: unknown) => ctx.logger.warn('sweeping abandoned uploads failed', { err: error }));
    await sweepAbandonedPortalUploads(ctx).catch((error: unknown) => ctx.logger.warn('sweeping abandoned portal uploads failed', { err: error }));
    await sweepAbandonedProjectUploads(ctx).catch((error: unknown) => ctx.logger.warn('sweeping abandoned resumable uploads failed', { err: error }));
    const now = ctx.clock.now();
    await Promise.all([
      ctx.store.jobs.pruneFinished(now - FINISHED_JOBS_KEPT_MS),
      ctx.store.webhooks.pruneDeliveries(now - DELIVERY_LOG_MS),
      ctx.store.sessions.sweep(now, config.sessions),
      ctx.store.oauth.deleteExpiredRecords(now),
      ctx.store.webhooks.deleteOfEndedGrants(now),
    ]).catch((error: unknown) =>
      ctx.logger.warn('pruning finished jobs, old deliveries, expired OAuth records and the webhooks of ended grants failed', { err: error }),
    );
  };
  void sweep();
  const sweeper = setInterval(sweep, 10 * 60_000);
  sweeper.unref();
  let draining = false;
  const app = createApp(ctx, { isDraining: () => draining });
  // Responses under way, so that a shutdown can tell each to close its connection when it is done.
  const underWay = new Set<ServerResponse>();
  const http = createServer({ requestTimeout: 0, maxHeaderSize }, (req, res) => {
    if (draining) res.setHeader('Connection', 'close');
    underWay.add(res);
    res.once('close', () => underWay.delete(res));
    app(req, res);
  });
  // Uploads of gigabytes may take a while; only idle connections time out.
  http.headersTimeout = 60_000;
  http.on('clientError', clientErrorAnswer(ctx.logger));
  await new Promise<void>((ready, fail) => {
    http.once('error', fail);
    http.listen(config.port, config.host, () => ready());
  });
  const { port } = http.address() as { port: number };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      // The worker's grace runs alongside the HTTP drain, so both end within SHUTDOWN_GRACE_SECONDS, not one after the other.
      const workerStopped = Promise.all([worker?.stop(), webhookWorker?.stop(), mailWorker?.stop()]);
      const closed = new Promise<void>((done) => http.close(() => done()));
      for (const res of underWay) {
        // RFC 9112 section 9.6: a server that sends "close" closes the connection after that response.
        if (!res.headersSent) res.setHeader('Connection', 'close');
        // A response whose headers are out already (a download) leaves its connection idle when done: close it then.
        else res.once('finish', () => setImmediate(() => http.closeIdleConnections()));
      }
      http.closeIdleConnections();
      const grace = setTimeout(() => {
        ctx.logger.warn('shutdown grace time over; cutting the connections still open', { open: underWay.size });
        http.closeAllConnections();
      }, config.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      clearInterval(sweeper);
      await workerStopped;
      ctx.mailer?.close();
      await store.close();
    })());
  return { ctx, worker, webhookWorker, mailWorker, http, sweep, address: `http://${host}:${port}`, close };
}
