/**
 * The job that analyses an uploaded audio file (kind "analyse-file"), queued
 * in the same transaction that marks the upload complete, so it survives a
 * restart. It stores the duration, the analysis, the renditions and the
 * peaks, and moves the file's status: pending → processing → ready, or
 * failed with a reason. A file that cannot be decoded fails at once; any
 * other error is retried by the worker with backoff.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Context } from '../context.ts';
import type { Store } from '../store/store.ts';
import type { Job } from '../jobs/job-queue.ts';
import { PermanentJobError, type JobHandler } from '../jobs/worker.ts';
import { fileBlobKey, renditionBlobKey } from '../blobs/keys.ts';
import { analyseAudio } from './analyse.ts';
import { UndecodableError, type MediaTools } from './media-tools.ts';

export const ANALYSE_FILE = 'analyse-file';

const AUDIO_EXTENSIONS = /\.(wav|wave|aif|aiff|flac|mp3|m4a|aac|alac|ogg|oga|opus|wma|caf|w64)$/i;

/** Whether a stored file is meant to be audio, and so gets analysed. */
export function isAudioFile(name: string, mimeType: string | null): boolean {
  return (mimeType ?? '').startsWith('audio/') || AUDIO_EXTENSIONS.test(name);
}

/** Queues the analysis of a file; call inside the transaction that completes its upload. */
export async function queueAnalysis(store: Store, projectId: string, boxId: string, now: number): Promise<void> {
  await store.jobs.enqueue(ANALYSE_FILE, { projectId, boxId }, { now, maxAttempts: 5 });
}

export function analyseFileHandler(ctx: Context, tools: MediaTools): JobHandler {
  const setStatus = (projectId: string, boxId: string, status: 'pending' | 'processing' | 'failed', statusReason: string | null = null) =>
    ctx.store.boxes.setProcessing(projectId, boxId, { status, statusReason }, ctx.clock.now());

  return {
    async run(job: Job) {
      const { projectId, boxId } = job.payload as { projectId: string; boxId: string };
      const box = await ctx.store.boxes.get(projectId, boxId);
      if (!box || box.kind !== 'file' || box.status === 'awaiting-upload') return; // deleted, or never uploaded: nothing to do
      await setStatus(projectId, boxId, 'processing');
      let workDir: string | undefined;
      let original: { path: string; release(): Promise<void> } | undefined;
      try {
        // Under DATA_DIR, next to the blobs, so that adopting the renditions is a rename, not a copy.
        await mkdir(join(ctx.config.dataDir, 'tmp'), { recursive: true });
        workDir = await mkdtemp(join(ctx.config.dataDir, 'tmp', 'analyse-'));
        original = await ctx.blobs.localFile(fileBlobKey(projectId, boxId));
        const result = await analyseAudio(tools, original.path, workDir, box.size ?? 0);
        // Stored side by side: each waits mostly on its own fsync.
        await Promise.all([
          ctx.blobs.adopt(renditionBlobKey(projectId, boxId, 'compressed'), result.files.compressed),
          result.files.lossless && ctx.blobs.adopt(renditionBlobKey(projectId, boxId, 'lossless'), result.files.lossless),
          ...([['peaks-json', result.peaks.json], ['peaks-dat', result.peaks.dat]] as const).map(([variant, bytes]) =>
            ctx.blobs.write(renditionBlobKey(projectId, boxId, variant), Readable.from([bytes]), { expectedSize: bytes.length }),
          ),
        ]);
        await ctx.store.boxes.setProcessing(projectId, boxId, { status: 'ready', duration: result.duration, audio: result.audio }, ctx.clock.now());
      } catch (error) {
        if (error instanceof UndecodableError) throw new PermanentJobError(error.message);
        // A passing failure: the file waits for the retry.
        await setStatus(projectId, boxId, 'pending');
        throw error;
      } finally {
        await original?.release();
        if (workDir) await rm(workDir, { recursive: true, force: true });
      }
    },
    async failed(job: Job, reason: string) {
      const { projectId, boxId } = job.payload as { projectId: string; boxId: string };
      await setStatus(projectId, boxId, 'failed', reason);
    },
  };
}
