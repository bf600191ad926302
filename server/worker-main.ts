/**
 * `npm run worker`: runs audio jobs without serving HTTP, for deployments
 * that keep processing apart from the API (set PROCESSING=external on the
 * servers). Several can run at once against PostgreSQL; WORKER_CONCURRENCY
 * sets how many jobs each runs in parallel.
 *
 * On SIGTERM or SIGINT it stops claiming jobs and lets those under way
 * finish for up to SHUTDOWN_GRACE_SECONDS; then it kills their ffmpeg and
 * hands them back to the queue, where another worker takes them at once. A
 * second signal cuts the grace short.
 */
import { flushCompileCache } from 'node:module';
import { loadConfigOrExit } from './config.ts';
import { createContext } from './open-context.ts';
import { startAudioWorker } from './resources/processing/audio-worker.ts';
import { startWebhookWorker } from './resources/webhooks/webhook-delivery.ts';
import { startMailWorker } from './resources/mail/mail-delivery.ts';
import { notificationMailJobs } from './resources/notifications/notifications-service.ts';
import { analysisEvents } from './resources/uploads/upload-events.ts';
import { BlobStoreUnavailableError } from './blobs/blob-store.ts';
import { SigningSecretMismatchError } from './signing/secret-fingerprint.ts';

const config = loadConfigOrExit();
const ctx = await createContext(config).catch((error: unknown) => {
  // A bucket it cannot use, or a signing secret the servers do not share, is said plainly, as a bad setting is.
  if (error instanceof BlobStoreUnavailableError || error instanceof SigningSecretMismatchError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
});
const worker = await startAudioWorker(ctx, analysisEvents(ctx));
if (!worker) {
  await ctx.store.close();
  process.exit(1);
}
// Deliveries go out from here too, so a deployment whose servers are busy still sends them.
const webhookWorker = config.webhooks.concurrency > 0 ? startWebhookWorker(ctx) : undefined;
// And mail, when there is an SMTP server to send it to.
const mailWorker = startMailWorker(ctx, notificationMailJobs(ctx));
// As in main.ts: the compile cache is written now, so that a worker that is killed still leaves the next start its cache.
flushCompileCache();
console.error(`Audio worker ${worker.id} is running (${config.workerConcurrency} at a time) on ${config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`}.`);

let stopping: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.error(`${signal} again: handing the jobs under way back now.`);
      void worker.stop(0);
      void webhookWorker?.stop(0);
      void mailWorker?.stop(0);
      return;
    }
    console.error(`${signal}: finishing the jobs under way (for up to ${config.shutdownGraceMs / 1000} s), then stopping.`);
    stopping = (async () => {
      try {
        await Promise.all([worker.stop(), webhookWorker?.stop(), mailWorker?.stop()]);
        ctx.mailer?.close();
        await ctx.store.close();
        process.exit(0);
      } catch (error) {
        ctx.logger.error('stopping the worker failed', { err: error });
        process.exit(1);
      }
    })();
  });
}
