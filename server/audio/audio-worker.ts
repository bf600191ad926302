/**
 * Starts a worker for the audio jobs, in the server (PROCESSING=in-process,
 * the default) or in `npm run worker`. Without ffmpeg it starts none and
 * says so: uploads are kept, and their files stay `pending` until a worker
 * with ffmpeg runs.
 */
import type { Context } from '../context.ts';
import { Worker } from '../jobs/worker.ts';
import { ANALYSE_FILE, analyseFileHandler } from './processing.ts';

export async function startAudioWorker(ctx: Context): Promise<Worker | undefined> {
  const missing = await ctx.media.unavailable();
  if (missing) {
    ctx.logger.warn(`Audio processing is off: ${missing}. Uploaded audio stays pending until ffmpeg is installed (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) and the server or a worker restarts.`);
    return undefined;
  }
  const worker = new Worker(
    ctx.store.jobs,
    { [ANALYSE_FILE]: analyseFileHandler(ctx, ctx.media) },
    { concurrency: ctx.config.workerConcurrency, pollMs: ctx.config.jobPollMs, leaseMs: ctx.config.jobLeaseMs, backoffBaseMs: ctx.config.jobBackoffMs },
    ctx.clock,
    ctx.logger,
  );
  worker.start();
  ctx.logger.info('audio worker started', { workerId: worker.id, concurrency: ctx.config.workerConcurrency });
  return worker;
}
