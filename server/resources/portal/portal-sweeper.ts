/**
 * Abandoned portal uploads: a tus upload may pause and resume for as long as
 * its uploader likes, but one to which no byte has come for a day is given
 * up. Its half-written bytes (and tus's `.json` record of them) are removed
 * from DATA_DIR/portal-uploads, its file (still waiting for its bytes) and
 * the stack made for it go, the room it held in the portal's total is
 * freed, and upload.failed is written for the owner's webhooks. An upload
 * that completed, or whose file its owner kept, is left alone.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { deleteIfEmptyStack } from '../boxes/boxes-service.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { portalUploadDir } from './portal-tus.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'jobQueued'>;

/** How long an unfinished portal upload may go without a byte before it is given up. */
export const PORTAL_UPLOAD_IDLE_MS = 24 * 3_600_000;

/** When a byte last came to the upload: the partial file's modification time, or its creation when it has none. */
async function lastWritten(path: string, created: number): Promise<number> {
  try {
    return (await stat(path)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return created;
    throw error;
  }
}

/** Removes the portal uploads idle for PORTAL_UPLOAD_IDLE_MS; answers how many. */
export async function sweepAbandonedPortalUploads(ctx: Ports): Promise<number> {
  const now = ctx.clock.now();
  const directory = portalUploadDir(ctx.config.dataDir);
  let removed = 0;
  for (const upload of await ctx.store.portal.listUnfinished(now - PORTAL_UPLOAD_IDLE_MS)) {
    const path = join(directory, upload.id);
    if (now - (await lastWritten(path, upload.timeCreated)) < PORTAL_UPLOAD_IDLE_MS) continue;
    const gone = await ctx.store.transaction(async (store) => {
      // Read again inside: a PATCH may have finished it since the listing.
      const current = await store.portal.get(upload.id);
      if (!current || current.timeCompleted !== null) return false;
      await store.portal.delete(upload.id);
      const file = await store.boxes.get(upload.projectId, upload.boxId);
      if (file?.status !== 'awaiting-upload') return true;
      const project = await store.projects.get(upload.projectId);
      if (project) {
        const reason = 'No byte of this portal upload came for a day; it was given up and the file removed. Send the file again.';
        const data: Schemas['UploadFailure'] = { object: 'upload_failure', uploadid: upload.id, boxid: file.id, name: file.name, reason };
        await recordEvent(ctx, store, { type: 'upload.failed', ownerId: project.ownerId, projectId: project.id, boxId: file.id, boxName: file.name, data });
      }
      await store.boxes.delete(upload.projectId, file.id);
      await deleteIfEmptyStack(store, upload.projectId, file.parentId);
      return true;
    });
    if (!gone) continue;
    // After the records: a failure here leaves bytes nothing points at, which the next sweep cannot find, so log it.
    await Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]).catch((error: unknown) =>
      ctx.logger.error('removing the bytes of an abandoned portal upload failed', { err: error, path }),
    );
    removed++;
  }
  return removed;
}
