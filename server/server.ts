/**
 * Starts the whole server from a configuration: opens the store (applying
 * migrations) and the blob store, builds the app and listens. Used by
 * main.ts, the tests and the benchmarks alike.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { dataDirMode, type Config } from './config.ts';
import type { Context } from './context.ts';
import { createApp } from './app.ts';
import { openStore } from './repositories.ts';
import { openBlobStore } from './blobs/open-blob-store.ts';
import { UrlSigner } from './signing/url-signer.ts';
import { SecretBox } from './signing/secret-box.ts';
import { startWebhookWorker } from './resources/webhooks/webhook-delivery.ts';
import { analysisEvents } from './resources/uploads/upload-events.ts';
import { checkSigningSecret } from './signing/secret-fingerprint.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { clientErrorAnswer, maxHeaderSize } from './http/client-error.ts';
import { BoxListCache } from './resources/boxes/box-list-cache.ts';
import { SystemMediaTools, type MediaTools } from './audio/media-tools.ts';
import { startAudioWorker } from './audio/audio-worker.ts';
import { sweepAbandonedUploads } from './resources/uploads/uploads-service.ts';
import type { Worker } from './jobs/worker.ts';
import { DELIVERY_LOG_MS } from './resources/webhooks/webhooks-service.ts';
import { sweepAbandonedPortalUploads } from './resources/portal/portal-sweeper.ts';
import { StripeProvider } from './payments/stripe-provider.ts';

/** How long jobs that ended stay in the queue's table, for someone looking into what happened. */
const FINISHED_JOBS_KEPT_MS = 7 * 24 * 3_600_000;

export interface RunningServer {
  ctx: Context;
  /** The audio worker running in this process, if any. */
  worker: Worker | undefined;
  /** This process's webhook sender; none with WEBHOOK_CONCURRENCY=0. */
  webhookWorker: Worker | undefined;
  http: Server;
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

/**
 * Opens the blob store and the store (applying migrations), checks that this
 * process's signing secret is the one the database's other processes use,
 * and gathers what the resources need.
 */
export async function createContext(
  config: Config,
  overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {},
  jobQueued: () => void = () => {},
): Promise<Context> {
  mkdirSync(config.dataDir, { recursive: true, mode: dataDirMode });
  const logger = overrides.logger ?? createLogger(config.logLevel);
  // Before the store: a bucket that cannot be used stops the start with nothing opened.
  const blobs = await openBlobStore(config);
  // The repositories are registered here, at the composition root (server/repositories.ts), not by the store.
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
  try {
    // Before anything signs: a secret the other processes on this database do not share stops the start.
    await checkSigningSecret(store.db, config.signingSecret, (overrides.clock ?? systemClock).now());
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    config,
    store,
    blobs,
    clock: overrides.clock ?? systemClock,
    signer: new UrlSigner(config.signingSecret),
    secrets: new SecretBox(config.signingSecret),
    logger,
    boxListCache: new BoxListCache(),
    media: overrides.media ?? new SystemMediaTools(),
    payments: config.stripe ? new StripeProvider(config.stripe) : undefined,
    jobQueued,
  };
}

export async function startServer(config: Config, overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {}): Promise<RunningServer> {
  let worker: Worker | undefined;
  let webhookWorker: Worker | undefined;
  const ctx = await createContext(config, overrides, () => {
    worker?.nudge();
    webhookWorker?.nudge();
  });
  const store = ctx.store;
  if (config.processing === 'in-process') worker = await startAudioWorker(ctx, analysisEvents(ctx));
  // Deliveries are light (one HTTP request each), so every server process sends them, whatever PROCESSING says.
  if (config.webhooks.concurrency > 0) webhookWorker = startWebhookWorker(ctx);
  // Every ten minutes, and once at start, remove files whose upload URL expired unused, and what the queue and the
  // webhook log no longer need: jobs that ended a week ago, deliveries older than the log's 30 days.
  const sweep = async () => {
    await sweepAbandonedUploads(ctx).catch((error: unknown) => ctx.logger.warn('sweeping abandoned uploads failed', { err: error }));
    await sweepAbandonedPortalUploads(ctx).catch((error: unknown) => ctx.logger.warn('sweeping abandoned portal uploads failed', { err: error }));
    const now = ctx.clock.now();
    await Promise.all([ctx.store.jobs.pruneFinished(now - FINISHED_JOBS_KEPT_MS), ctx.store.webhooks.pruneDeliveries(now - DELIVERY_LOG_MS)]).catch((error: unknown) =>
      ctx.logger.warn('pruning finished jobs and old deliveries failed', { err: error }),
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
      const workerStopped = Promise.all([worker?.stop(), webhookWorker?.stop()]);
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
      await store.close();
    })());
  return { ctx, worker, webhookWorker, http, address: `http://${host}:${port}`, close };
}
