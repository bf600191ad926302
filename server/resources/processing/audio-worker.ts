/**
 * Starts a worker for the audio jobs, in the server (PROCESSING=in-process,
 * the default) or in `npm run worker`. Without ffmpeg it starts none and
 * says so: uploads are kept, and their files stay `pending` until a worker
 * with ffmpeg runs. Before it starts, it removes the scratch folders that
 * analyses cut off by a crash left behind.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import { Worker } from '../../jobs/worker.ts';
import { ANALYSE_FILE, analyseFileHandler, sweepStaleScratch, type AnalysisSettled } from './processing.ts';

export async function startAudioWorker(ctx: Context, settled?: AnalysisSettled): Promise<Worker<Store> | undefined> {
  const missing = await ctx.media.unavailable();
  if (missing) {
    ctx.logger.warn(`Audio processing is off: ${missing}. Uploaded audio stays pending until ffmpeg is installed (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) and the server or a worker restarts.`);
    return undefined;
  }
  try {
    // Stale: nothing written for a whole lease. A live analysis elsewhere writes all along, so it is spared.
    const removed = await sweepStaleScratch(ctx.config.dataDir, ctx.clock.now() - ctx.config.jobLeaseMs);
    if (removed > 0) ctx.logger.info('removed scratch folders of interrupted analyses', { removed });
  } catch (error) {
    // Leftovers cost disk space, not correctness: the worker starts anyway.
    ctx.logger.error('removing the scratch folders of interrupted analyses failed', { err: error });
  }
  const worker = new Worker<Store>(
    ctx.store,
    { [ANALYSE_FILE]: analyseFileHandler(ctx, ctx.media, settled) },
    {
      concurrency: ctx.config.workerConcurrency,
      pollMs: ctx.config.jobPollMs,
      leaseMs: ctx.config.jobLeaseMs,
      backoffBaseMs: ctx.config.jobBackoffMs,
      stopGraceMs: ctx.config.shutdownGraceMs,
    },
    ctx.clock,
    ctx.logger,
  );
  worker.start();
  ctx.logger.info('audio worker started', { workerId: worker.id, concurrency: ctx.config.workerConcurrency });
  return worker;
}
