/**
 * Starts the whole server from a configuration: opens the store (applying
 * migrations) and the blob store, builds the app and listens. Used by
 * main.ts, the tests and the benchmarks alike.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Config } from './config.ts';
import type { Context } from './context.ts';
import { createApp } from './app.ts';
import { openStore } from './store/store.ts';
import { LocalDiskBlobStore } from './blobs/local-disk-blob-store.ts';
import { UrlSigner } from './signing/url-signer.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createLogger, type Logger } from './http/logger.ts';
import { BoxListCache } from './resources/boxes/box-list-cache.ts';
import { SystemMediaTools, type MediaTools } from './audio/media-tools.ts';
import { startAudioWorker } from './audio/audio-worker.ts';
import { sweepAbandonedUploads } from './resources/uploads/uploads-service.ts';
import type { Worker } from './jobs/worker.ts';

export interface RunningServer {
  ctx: Context;
  /** The audio worker running in this process, if any. */
  worker: Worker | undefined;
  http: Server;
  /** The address it listens at, for example http://127.0.0.1:8080. */
  address: string;
  /** Stops taking connections, lets requests under way (uploads too) finish within the grace time, then closes the store. */
  close(): Promise<void>;
}

/** Opens the store (applying migrations) and the blob store, and gathers what the resources need. */
export async function createContext(
  config: Config,
  overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {},
  jobQueued: () => void = () => {},
): Promise<Context> {
  mkdirSync(config.dataDir, { recursive: true });
  return {
    config,
    store: await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }),
    blobs: new LocalDiskBlobStore(join(config.dataDir, 'blobs')),
    clock: overrides.clock ?? systemClock,
    signer: new UrlSigner(config.signingSecret),
    logger: overrides.logger ?? createLogger(config.logLevel),
    boxListCache: new BoxListCache(),
    media: overrides.media ?? new SystemMediaTools(),
    jobQueued,
  };
}

export async function startServer(config: Config, overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {}): Promise<RunningServer> {
  let worker: Worker | undefined;
  const ctx = await createContext(config, overrides, () => worker?.nudge());
  const store = ctx.store;
  if (config.processing === 'in-process') worker = await startAudioWorker(ctx);
  // Every ten minutes, and once at start, remove files whose upload URL expired unused.
  const sweep = () => sweepAbandonedUploads(ctx).catch((error) => ctx.logger.warn('sweeping abandoned uploads failed', { error: String(error) }));
  void sweep();
  const sweeper = setInterval(sweep, 10 * 60_000);
  sweeper.unref();
  const http = createServer({ requestTimeout: 0 }, createApp(ctx));
  // Uploads of gigabytes may take a while; only idle connections time out.
  http.headersTimeout = 60_000;
  await new Promise<void>((ready, fail) => {
    http.once('error', fail);
    http.listen(config.port, config.host, () => ready());
  });
  const { port } = http.address() as { port: number };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const closed = new Promise<void>((done) => http.close(() => done()));
      http.closeIdleConnections();
      const grace = setTimeout(() => http.closeAllConnections(), config.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      clearInterval(sweeper);
      await worker?.stop();
      await store.close();
    })());
  return { ctx, worker, http, address: `http://${host}:${port}`, close };
}
