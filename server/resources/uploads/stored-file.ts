/**
 * What every way of uploading a file does once its bytes are stored, in the
 * transaction that records them: audio waits for analysis (`pending`, its
 * job queued in this same transaction, so that it survives a crash);
 * anything else is `ready`. The upload.completed event goes with it.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { queueAnalysis } from '../processing/processing.ts';
import { recordFileEvent } from './upload-events.ts';

export async function settleStoredFile(ctx: Pick<Context, 'clock' | 'jobQueued'>, store: Store, file: BoxRecord, audio: boolean): Promise<void> {
  file.status = audio ? 'pending' : 'ready';
  await store.boxes.setProcessing(file.projectId, file.id, { status: file.status }, ctx.clock.now());
  if (audio) await queueAnalysis(store, file.projectId, file.id, ctx.clock.now());
  const project = await store.projects.get(file.projectId);
  if (project) await recordFileEvent(ctx, store, 'upload.completed', project.ownerId, file);
}
