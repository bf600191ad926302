/**
 * Abandoned resumable uploads of project members, as the portal's are swept
 * (portal/portal-sweeper.ts): an upload may pause and resume for as long as
 * its sender likes, but one to which no byte has come for a day is given up.
 * Its half-written bytes (and tus's `.json` record of them) are removed, its
 * file (still waiting for its bytes) and the stack made for it go, the room
 * it held is freed, and upload.failed is written for the owner's webhooks.
 * Bytes whose upload has no record any more (its project was deleted, which
 * takes the records with it) go too, once idle as long.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../context.ts';
import { abandon, PROJECT_UPLOAD_IDLE_MS, projectUploadDir } from './project-uploads-service.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'jobQueued'>;

/** When a byte last came to the upload: the partial file's modification time, or `otherwise` when it has none. */
async function lastWritten(path: string, otherwise: number): Promise<number> {
  try {
    return (await stat(path)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return otherwise;
    throw error;
  }
}

/** Removes the uploads idle for PROJECT_UPLOAD_IDLE_MS, and bytes no upload owns; answers how many uploads. */
export async function sweepAbandonedProjectUploads(ctx: Ports): Promise<number> {
  const now = ctx.clock.now();
  const directory = projectUploadDir(ctx.config.dataDir);
  const remove = (path: string) =>
    Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]).catch((error: unknown) =>
      ctx.logger.error('removing the bytes of an abandoned upload failed', { err: error, path }),
    );
  let removed = 0;
  for (const upload of await ctx.store.projectUploads.listUnfinished(now - PROJECT_UPLOAD_IDLE_MS)) {
    const path = join(directory, upload.id);
    if (now - (await lastWritten(path, upload.timeCreated)) < PROJECT_UPLOAD_IDLE_MS) continue;
    // abandon reads the record again inside its transaction: a PATCH may have finished it since the listing.
    if (!(await abandon(ctx, upload, 'No byte of this upload came for a day; it was given up and the file removed. Upload the file again.'))) continue;
    // After the records: a failure here leaves bytes, which the listing below finds next time.
    await remove(path);
    removed++;
  }
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const name of names) {
    if (name.includes('.')) continue;
    const path = join(directory, name);
    if ((await ctx.store.projectUploads.get(name)) !== undefined) continue;
    if (now - (await lastWritten(path, now)) < PROJECT_UPLOAD_IDLE_MS) continue;
    await remove(path);
  }
  return removed;
}
