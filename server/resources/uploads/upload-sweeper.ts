/**
 * The sweep of uploads that will never complete, run at start and every ten
 * minutes (server.ts). It removes, in turn:
 *
 * 1. uploads whose URL expired before they completed and that no live claim
 *    holds, with their `awaiting-upload` file (and a stack it leaves empty)
 *    and any bytes;
 * 2. stale claims (their PUT's server died): freed, so the URL works again;
 * 3. orphaned blobs: the bytes of a file box that does not exist, or that
 *    still awaits its upload with no live claim; renditions of a file box
 *    that does not exist; artwork that no project shows;
 * 4. the temporary files of blob writes cut off by a crash, once nothing
 *    has written to them for a whole claim deadline (a write under way keeps
 *    writing, so it is never taken).
 *
 * Where a PUT could be racing it, the sweep first claims the upload itself,
 * so the PUT loses cleanly with a 409 and nothing is removed under it. So
 * any number of servers can sweep at once.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.ts';
import { ALL_PROJECTS_PREFIX, artworkBlobKey, fileBlobKey, parseBlobKey, renditionBlobKey, type ParsedBlobKey } from '../../blobs/keys.ts';
import { deleteIfEmptyStack } from '../boxes/boxes-service.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import type { Store } from '../../repositories.ts';
import { recordUploadFailure } from './upload-events.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'logger' | 'jobQueued'>;

export interface UploadSweep {
  /** Uploads whose URL expired unused or cut off, removed with their file. */
  abandonedUploads: number;
  /** Stale claims freed. */
  staleClaims: number;
  orphanedBlobs: number;
  /** Temporary files of cut-off writes removed. */
  unfinishedWrites: number;
}

/** The sweep as server.ts runs it; answers how many abandoned uploads it removed. */
export async function sweepAbandonedUploads(ctx: Ports): Promise<number> {
  return (await sweepUploads(ctx)).abandonedUploads;
}

/** Runs every step of the sweep; a step that fails is logged, and the others still run. */
export async function sweepUploads(ctx: Ports): Promise<UploadSweep> {
  const now = ctx.clock.now();
  const sweeper = new Sweeper(ctx, now);
  const result: UploadSweep = { abandonedUploads: 0, staleClaims: 0, orphanedBlobs: 0, unfinishedWrites: 0 };
  const steps: Array<[keyof UploadSweep, () => Promise<number>]> = [
    ['abandonedUploads', () => sweeper.abandonedUploads()],
    ['staleClaims', () => ctx.store.uploads.releaseStale(now)],
    ['orphanedBlobs', () => sweeper.orphanedBlobs()],
    // A claim not renewed for a whole deadline is stale; a temporary file not written to for as long is, too.
    ['unfinishedWrites', () => ctx.blobs.sweepUnfinishedWrites(ctx.config.uploadClaimMs)],
  ];
  for (const [step, run] of steps) {
    try {
      result[step] = await run();
    } catch (error) {
      ctx.logger.error(`the upload sweep failed at ${step}; it tries again next time`, { err: error });
    }
  }
  if (Object.values(result).some((count) => count > 0)) ctx.logger.info('upload sweep', { ...result });
  return result;
}

class Sweeper {
  /** The sweep's own claims name this token. */
  private readonly token = `sweep-${randomBytes(12).toString('base64url')}`;

  private readonly ctx: Ports;
  private readonly now: number;

  constructor(
    ctx: Ports,
    now: number,
  ) {
    this.ctx = ctx;
    this.now = now;
  }

  /** Claims an upload for a whole deadline from now (not from the start of a sweep that may have taken a while). */
  private claim(store: Store, uploadId: string): Promise<boolean> {
    const now = this.ctx.clock.now();
    return store.uploads.claim(uploadId, this.token, now, now + this.ctx.config.uploadClaimMs);
  }

  async abandonedUploads(): Promise<number> {
    let removed = 0;
    for (const upload of await this.ctx.store.uploads.listAbandoned(this.now)) {
      const leftover = await this.ctx.store.transaction(async (store) => {
        // Claiming it first means a PUT that starts now loses the race cleanly, with a 409.
        if (!(await this.claim(store, upload.id))) return undefined;
        await store.uploads.delete(upload.id);
        // An unfinished artwork upload has no artwork record yet: its bytes, if any, are nobody's.
        if (upload.kind === 'artwork') return artworkBlobKey(upload.projectId, upload.objectId);
        const box = await store.boxes.get(upload.projectId, upload.objectId);
        if (box && box.status !== 'awaiting-upload') return null;
        if (box) {
          await recordUploadFailure(this.ctx, store, upload, 'The upload URL expired before the file was uploaded; the file was removed.');
          await store.boxes.delete(upload.projectId, box.id);
          await deleteIfEmptyStack(store, upload.projectId, box.parentId);
        }
        return fileBlobKey(upload.projectId, upload.objectId);
      });
      if (leftover === undefined) continue;
      removed++;
      // A PUT cut off after its bytes appeared, before it committed, left them.
      if (leftover) await this.ctx.blobs.delete(leftover);
    }
    return removed;
  }

  async orphanedBlobs(): Promise<number> {
    // The keys first, the records after: a file's bytes are only ever written once its box exists,
    // so a box missing after the listing is missing for good.
    const byProject = new Map<string, ParsedBlobKey[]>();
    for await (const key of this.ctx.blobs.list(ALL_PROJECTS_PREFIX)) {
      // A key of another shape is none of this sweep's business.
      const parsed = parseBlobKey(key);
      if (!parsed) continue;
      byProject.set(parsed.projectId, [...(byProject.get(parsed.projectId) ?? []), parsed]);
    }
    let removed = 0;
    for (const [projectId, blobs] of byProject) {
      const files = new Map((await this.ctx.store.boxes.listProject(projectId, 'file')).map((box) => [box.id, box]));
      for (const blob of blobs) {
        if (await this.removeIfOrphaned(blob, files)) removed++;
      }
    }
    return removed;
  }

  private async removeIfOrphaned(blob: ParsedBlobKey, files: Map<string, BoxRecord>): Promise<boolean> {
    switch (blob.kind) {
      case 'rendition':
        return !files.has(blob.boxId) && this.remove(renditionBlobKey(blob.projectId, blob.boxId, blob.variant));
      case 'file': {
        const key = fileBlobKey(blob.projectId, blob.boxId);
        const box = files.get(blob.boxId);
        if (!box) return this.remove(key);
        return box.status === 'awaiting-upload' && this.removeUnlessClaimed(blob.boxId, key);
      }
      case 'artwork': {
        const key = artworkBlobKey(blob.projectId, blob.artworkId);
        // The record first: once it exists, the transaction that made it the project's artwork has committed.
        if (await this.ctx.store.projects.getArtwork(blob.artworkId)) {
          // Replaced since (the PUT that replaced it removes the old bytes, unless that failed).
          const project = await this.ctx.store.projects.get(blob.projectId);
          return project?.artworkId !== blob.artworkId && this.remove(key);
        }
        return this.removeUnlessClaimed(blob.artworkId, key);
      }
    }
  }

  /**
   * Removes the bytes of an upload that has not completed, unless a PUT
   * holds it: under the sweep's own claim, so no PUT can write or complete
   * it meanwhile.
   */
  private async removeUnlessClaimed(objectId: string, key: string): Promise<boolean> {
    const upload = await this.ctx.store.uploads.findByObject(objectId);
    // No upload: nothing can ever complete these bytes.
    if (!upload) return this.remove(key);
    if (!(await this.claim(this.ctx.store, upload.id))) return false;
    try {
      return await this.remove(key);
    } finally {
      await this.ctx.store.uploads.release(upload.id, this.token);
    }
  }

  private async remove(key: string): Promise<true> {
    await this.ctx.blobs.delete(key);
    this.ctx.logger.info('removed an orphaned blob', { key });
    return true;
  }
}
