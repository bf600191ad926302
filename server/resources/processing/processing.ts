/**
 * The job that analyses an uploaded audio file (kind "analyse-file"), queued
 * in the same transaction that marks the upload complete, so it survives a
 * restart. It stores the duration, the analysis, the renditions and the
 * peaks, and moves the file's status: pending → processing → ready, or
 * failed with a reason. A file that cannot be decoded fails at once; any
 * other error (a full disk, ffmpeg killed or missing) is retried by the
 * worker with backoff, and the file waits as pending meanwhile.
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { Job } from '../../jobs/job-queue.ts';
import { PermanentJobError, type JobHandler } from '../../jobs/worker.ts';
import { fileBlobKey, renditionBlobKey } from '../../blobs/keys.ts';
import { analyseAudio } from '../../audio/analyse.ts';
import { UndecodableError, type MediaTools } from '../../audio/media-tools.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'logger'>;

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

/**
 * Told, in the transaction that settles a file's analysis, how it ended: the
 * composition root passes the webhook events here (file.processed,
 * file.processing_failed), so that this layer knows nothing of them.
 */
export type AnalysisSettled = (store: Store, projectId: string, boxId: string, outcome: 'processed' | 'failed') => Promise<void>;

export function analyseFileHandler(ctx: Ports, tools: MediaTools, settled: AnalysisSettled = async () => {}): JobHandler<Store> {
  const target = (job: Job) => job.payload as { projectId: string; boxId: string };
  const setStatus = (store: Store, job: Job, status: 'pending' | 'processing' | 'failed', statusReason: string | null = null) =>
    store.boxes.setProcessing(target(job).projectId, target(job).boxId, { status, statusReason }, ctx.clock.now());

  return {
    async run({ job, signal, complete }) {
      const { projectId, boxId } = target(job);
      const box = await ctx.store.boxes.get(projectId, boxId);
      if (box?.kind !== 'file' || box.status === 'awaiting-upload') return; // deleted, or never uploaded: nothing to do
      await setStatus(ctx.store, job, 'processing');
      let workDir: string | undefined;
      let original: { path: string; release(): Promise<void> } | undefined;
      try {
        // Under DATA_DIR, next to the blobs, so that adopting the renditions is a rename, not a copy.
        await mkdir(scratchRoot(ctx.config.dataDir), { recursive: true, mode: 0o700 });
        workDir = await mkdtemp(join(scratchRoot(ctx.config.dataDir), SCRATCH_PREFIX));
        original = await ctx.blobs.localFile(fileBlobKey(projectId, boxId));
        const result = await analyseAudio(tools, original.path, workDir, box.size ?? 0, signal);
        signal.throwIfAborted();
        // Stored side by side: each waits mostly on its own fsync.
        await Promise.all([
          ctx.blobs.adopt(renditionBlobKey(projectId, boxId, 'compressed'), result.files.compressed),
          result.files.lossless && ctx.blobs.adopt(renditionBlobKey(projectId, boxId, 'lossless'), result.files.lossless),
          ...([['peaks-json', result.peaks.json], ['peaks-dat', result.peaks.dat]] as const).map(([variant, bytes]) =>
            ctx.blobs.write(renditionBlobKey(projectId, boxId, variant), Readable.from([bytes]), { expectedSize: bytes.length, signal }),
          ),
        ]);
        // The file is ready only if this worker still holds the job: in the transaction that completes it.
        await complete(async (store) => {
          await store.boxes.setProcessing(projectId, boxId, { status: 'ready', duration: result.duration, audio: result.audio }, ctx.clock.now());
          await settled(store, projectId, boxId, 'processed');
        });
      } catch (error) {
        // The input's fault: the job fails for good, and `failed` below gives the file the reason. Anything else
        // (ToolEnvironmentError, a missing blob, an abort) is the worker's to retry or hand back; `requeued` resets the status.
        throw error instanceof UndecodableError ? new PermanentJobError(error.message) : error;
      } finally {
        await original?.release();
        if (workDir) await rm(workDir, { recursive: true, force: true });
      }
    },
    async requeued(store: Store, job: Job) {
      // Waits for the next attempt, in the transaction that gives the job back.
      await setStatus(store, job, 'pending');
    },
    async failed(store: Store, job: Job, reason: string) {
      await setStatus(store, job, 'failed', reason);
      await settled(store, target(job).projectId, target(job).boxId, 'failed');
    },
  };
}

/** Where analyses keep their scratch folders: DATA_DIR/tmp/analyse-*. */
const SCRATCH_PREFIX = 'analyse-';
const scratchRoot = (dataDir: string) => join(dataDir, 'tmp');

/**
 * Removes the scratch folders that analyses cut off by a crash left behind:
 * those in which nothing was written for longer than a job lease. A running
 * analysis, in this process or another sharing DATA_DIR, writes its outputs
 * all along (and renews its lease as often), so it is never taken for stale.
 * Answers how many were removed.
 */
export async function sweepStaleScratch(dataDir: string, staleBefore: number): Promise<number> {
  const root = scratchRoot(dataDir);
  const names = await readdir(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  let removed = 0;
  for (const name of names.filter((candidate) => candidate.startsWith(SCRATCH_PREFIX))) {
    const folder = join(root, name);
    if ((await lastWritten(folder)) < staleBefore) {
      await rm(folder, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/** The latest modification time of a folder and of what it holds (ms). */
async function lastWritten(folder: string): Promise<number> {
  let latest = (await stat(folder)).mtimeMs;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const info = await stat(join(folder, entry.name)).catch((error: NodeJS.ErrnoException) => {
      // Renamed away (adopted into the blob store) meanwhile: the folder itself was written just now.
      if (error.code === 'ENOENT') return { mtimeMs: Number.POSITIVE_INFINITY };
      throw error;
    });
    latest = Math.max(latest, info.mtimeMs);
  }
  return latest;
}
