/**
 * The upload.* events of file uploads, written in the transaction of the
 * change they report (see ../webhooks/outbox.ts), for the webhooks of the
 * account that owns the project.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Store } from '../../repositories.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { boxJson } from '../boxes/boxes-service.ts';
import type { UploadRecord } from './upload-repository.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { notifyOfFailedAnalysis } from '../notifications/notifications-service.ts';

/** upload.started or upload.completed, with the file as it is now. */
export async function recordFileEvent(ctx: Pick<Context, 'clock' | 'jobQueued'>, store: Store, type: 'upload.started' | 'upload.completed', ownerId: string, file: BoxRecord): Promise<void> {
  await recordEvent(ctx, store, { type, ownerId, projectId: file.projectId, boxId: file.id, boxName: file.name, data: boxJson(file) });
}

/** upload.failed: an upload's bytes were refused or cut off, or its URL expired unused; `reason` says which. */
export async function recordUploadFailure(ctx: Pick<Context, 'clock' | 'jobQueued'>, store: Store, upload: UploadRecord, reason: string): Promise<void> {
  const project = await store.projects.get(upload.projectId);
  if (!project || upload.kind !== 'file') return;
  const data: Schemas['UploadFailure'] = { object: 'upload_failure', uploadid: upload.id, boxid: upload.objectId, name: upload.name, reason };
  await recordEvent(ctx, store, { type: 'upload.failed', ownerId: project.ownerId, projectId: upload.projectId, boxId: upload.objectId, boxName: upload.name, data });
}

/** file.processed or file.processing_failed: the file with its status and, once processed, its analysis. */
export function analysisEvents(ctx: Pick<Context, 'clock' | 'config' | 'jobQueued'>) {
  return async (store: Store, projectId: string, boxId: string, outcome: 'processed' | 'failed'): Promise<void> => {
    const [project, file] = await Promise.all([store.projects.get(projectId), store.boxes.get(projectId, boxId)]);
    if (!project || !file) return;
    const type = outcome === 'processed' ? 'file.processed' : 'file.processing_failed';
    await recordEvent(ctx, store, { type, ownerId: project.ownerId, projectId, boxId, boxName: file.name, data: boxJson(file) });
    if (outcome === 'failed') await notifyOfFailedAnalysis(ctx, store, project, file);
  };
}
