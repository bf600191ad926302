/**
 * Resumable uploads of project members: the owner, admins and editors send a
 * file in pieces over tus 1.0.0 (project-uploads-tus.ts carries the
 * protocol; this file the rules), resuming after a dropped connection or a
 * reloaded page. A file lands as through requestUploadUrl, whose service
 * makes its box (createFileBox), and is settled as every upload is
 * (settleStoredFile: stored, analysed when it is audio, upload.completed).
 *
 * The box is made when the upload is created, before its bytes, as
 * requestUploadUrl makes it before its PUT: the file shows `awaiting-upload`
 * in the project at once (the studio lists it with its progress), every rule
 * of the box (the parent, the stacking of versions) answers before a byte is
 * sent, and the creation can tell the client the file's id.
 */
import { join } from 'node:path';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { badRequest, notFound } from '../../lib/problems.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { deleteIfEmptyStack } from '../boxes/boxes-service.ts';
import { createFileBox, declaredSize, requireRoomFor } from '../uploads/uploads-service.ts';
import { settleStoredFile } from '../uploads/stored-file.ts';
import { isAudioFile } from '../processing/processing.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { checkFileName } from '../portal/portal-rules.ts';
import type { NewTusUpload } from '../tus/tus-routes.ts';
import type { ProjectUploadRecord } from './project-upload-repository.ts';
import { actorOf, can } from '../../auth/authorize.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'signer' | 'logger' | 'jobQueued'>;

/** Where tus keeps the bytes of members' uploads under way, under DATA_DIR. */
export const projectUploadDir = (dataDir: string) => join(dataDir, 'project-uploads');

/** How long an unfinished upload may go without a byte before it is given up, as a portal's. */
export const PROJECT_UPLOAD_IDLE_MS = 24 * 3_600_000;

// The MimeType schema of UploadUrlRequest (openapi/schemas/boxes.yaml): `type/subtype`, without parameters.
const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
// The Id schema (openapi/schemas/common.yaml): an opaque string of 1 to 64 characters; these are the ones the server makes.
const BOX_ID = /^[A-Za-z0-9_-]{1,64}$/;

const noUpload = (projectId: string, uploadId: string) =>
  notFound(`Project ${projectId} has no upload ${uploadId} under way: it was cancelled or given up. Start the upload again.`);

/** The project a request is for, when the caller may upload to it (the owner, or the admin or editor role; 404 or 403 otherwise). */
export async function uploadableProject(ctx: Pick<Ports, 'store'>, caller: Caller, projectId: string) {
  return (await accessProject(ctx, caller, projectId, 'write')).project;
}

/**
 * The upload, when it is one of this project's that the caller started:
 * another member's upload URL opens nothing (404, as for an unknown one).
 */
export async function requireUpload(ctx: Pick<Ports, 'store'>, caller: Caller, projectId: string, uploadId: string): Promise<ProjectUploadRecord> {
  const upload = await ctx.store.projectUploads.get(uploadId);
  if (!upload || upload.projectId !== projectId) throw noUpload(projectId, uploadId);
  // Another member's upload URL opens nothing: the upload is its starter's own (the policy's account:own).
  if (!can(actorOf(caller, undefined), { permission: 'account:own', thing: { kind: 'upload', id: uploadId, ownerId: upload.userId } })) throw noUpload(projectId, uploadId);
  return upload;
}

/** Reads what Upload-Metadata says of the file: its name, type, parent and autoStack, refused with 400 naming what to fix. */
function fileOf(metadata: NewTusUpload['metadata']) {
  const name = checkFileName(metadata.filename);
  const mimeType = (metadata.filetype ?? '').split(';')[0].trim() || 'application/octet-stream';
  if (!MIME_TYPE.test(mimeType)) throw badRequest(`filetype ${JSON.stringify(mimeType.slice(0, 100))} is not a MIME type: send type/subtype, such as audio/wav, or leave it out.`, [{ header: 'upload-metadata', detail: 'filetype is not a MIME type' }]);
  const parentid = metadata.parentid || undefined;
  if (parentid !== undefined && !BOX_ID.test(parentid)) throw badRequest('parentid must be the id of a folder or stack of the project.', [{ header: 'upload-metadata', detail: 'parentid is not an id' }]);
  const flag = metadata.autoStack;
  if (flag != null && flag !== 'true' && flag !== 'false') throw badRequest(`autoStack must be "true" or "false", not ${JSON.stringify(flag.slice(0, 20))}.`, [{ header: 'upload-metadata', detail: 'autoStack must be true or false' }]);
  return { name, mimeType, parentid, ...(flag != null ? { autoStack: flag === 'true' } : {}) };
}

/**
 * Creates the upload: checks its length against the upload limit and the
 * owner's quota, then, in one transaction, makes the file box (through
 * createFileBox, as requestUploadUrl does), the upload's record and
 * upload.started. Every refusal comes before a byte of the file is sent.
 */
export async function createUpload(ctx: Ports, caller: Caller, projectId: string, request: NewTusUpload): Promise<BoxRecord> {
  // tus 1.0.0, creation extension: "If the length of the upload is not known, the Client MAY set the Upload-Defer-Length header" — not taken
  // here: the limit and the quota are checked against the declared length, before the bytes.
  if (request.size === undefined) throw badRequest('Declare the file\'s size in Upload-Length: it is checked before the upload starts.', [{ header: 'upload-length', detail: 'is required' }]);
  const file = fileOf(request.metadata);
  const size = declaredSize(request.size, ctx.config.maxUploadBytes, 'upload');
  const project = await uploadableProject(ctx, caller, projectId);
  return ctx.store.transaction(async (store) => {
    // The declared length must fit in the room left (createFileBox checks it), though it reserves none: the record below makes the file
    // count only the room of the bytes received (bytesOwnedBy), so that declarations without bytes cannot fill the owner's quota.
    const { file: box } = await createFileBox(ctx, store, caller, project, { ...file, size });
    await store.projectUploads.insert({
      id: request.uploadId,
      projectId,
      userId: caller.id,
      boxId: box.id,
      size,
      roomBytes: Math.min(request.bodyBytes, size),
      timeCreated: ctx.clock.now(),
    });
    return box;
  });
}

/**
 * Claims the room of the bytes a request is about to send (a PATCH from
 * `offset`, announcing `bytes`): the upload then takes `offset + bytes`
 * until the request ends and its stored bytes are counted (settleRoom).
 * Refused with 413, before a byte is taken, when that would take the owner
 * over their quota; checked with the project's row locked, so that two
 * requests at once cannot both take the last room.
 */
export async function claimRoom(ctx: Ports, upload: ProjectUploadRecord, offset: number, bytes: number): Promise<void> {
  const end = Math.min(offset + bytes, upload.size);
  await ctx.store.transaction(async (store) => {
    if (!(await store.boxes.lockProject(upload.projectId))) throw noUpload(upload.projectId, upload.id);
    const current = await store.projectUploads.get(upload.id);
    if (!current || current.timeCompleted !== null) return;
    const more = end - current.roomBytes;
    if (more <= 0) return;
    const project = await store.projects.get(upload.projectId);
    if (!project) throw noUpload(upload.projectId, upload.id);
    await requireRoomFor(ctx, store, project.ownerId, upload.projectId, more);
    await store.projectUploads.setRoom(upload.id, end);
  });
}

/**
 * Once a request that sent bytes ends: an unfinished upload takes the room
 * of the bytes stored; one given up meanwhile, or whose file was deleted,
 * answers 'remove' (its bytes go).
 */
export async function settleUpload(ctx: Pick<Ports, 'store' | 'clock' | 'jobQueued'>, uploadId: string, stored: () => Promise<number>): Promise<'remove' | undefined> {
  const upload = await ctx.store.projectUploads.get(uploadId);
  if (!upload) return 'remove';
  if (upload.timeCompleted !== null) return;
  const file = await ctx.store.boxes.get(upload.projectId, upload.boxId);
  if (file?.status !== 'awaiting-upload') {
    await abandon(ctx, upload, 'The file was deleted during the upload.');
    return 'remove';
  }
  await ctx.store.projectUploads.setRoom(uploadId, await stored());
}

/**
 * Takes a finished upload's bytes (the file at `path`, which tus wrote)
 * into the blob store as the file's original, then, in one transaction,
 * completes the upload and settles the file as every upload is: pending
 * (audio, its analysis queued) or ready, and upload.completed. Answers the
 * file's box. A file deleted meanwhile is refused (404), and its bytes go.
 */
export async function finishUpload(ctx: Ports, uploadId: string, path: string): Promise<BoxRecord> {
  const upload = await ctx.store.projectUploads.get(uploadId);
  if (!upload) throw notFound(`There is no upload ${uploadId}. Start the upload again.`);
  const file = await ctx.store.boxes.get(upload.projectId, upload.boxId);
  if (file?.status !== 'awaiting-upload') {
    await abandon(ctx, upload, 'The file was deleted during the upload.');
    throw notFound(`The file ${upload.boxId} was deleted during the upload.`);
  }
  const key = fileBlobKey(upload.projectId, upload.boxId);
  // On disk a rename (DATA_DIR holds both); on S3 an upload of the finished file.
  await ctx.blobs.adopt(key, path);
  const done = await ctx.store.transaction(async (store) => {
    await store.boxes.lockProject(upload.projectId);
    const current = await store.boxes.get(upload.projectId, upload.boxId);
    if (!current || !(await store.projectUploads.complete(uploadId, ctx.clock.now()))) return undefined;
    await settleStoredFile(ctx, store, current, isAudioFile(current.name, current.mimeType));
    return current;
  });
  if (!done) {
    await ctx.blobs.delete(key).catch((error: unknown) => ctx.logger.error('removing the bytes of a file deleted during its upload failed; the sweep removes them later', { err: error, key }));
    throw notFound(`The file ${upload.boxId} was deleted during the upload.`);
  }
  ctx.jobQueued();
  return done;
}

/**
 * Gives up an upload: its file box (and the stack made for it, now empty)
 * and its record go, and upload.failed says why, in one transaction;
 * answers false when it was complete or gone already. What a
 * tus termination (DELETE) does, and the sweep of abandoned uploads.
 */
export async function abandon(ctx: Pick<Ports, 'store' | 'clock' | 'jobQueued'>, upload: ProjectUploadRecord, reason: string): Promise<boolean> {
  return ctx.store.transaction(async (store) => {
    await store.boxes.lockProject(upload.projectId);
    const current = await store.projectUploads.get(upload.id);
    if (!current || current.timeCompleted !== null) return false;
    await store.projectUploads.delete(upload.id);
    const file = await store.boxes.get(upload.projectId, upload.boxId);
    // A file whose bytes arrived otherwise is its own; only one still waiting for these goes.
    if (file?.status !== 'awaiting-upload') return true;
    await store.boxes.delete(upload.projectId, file.id);
    await deleteIfEmptyStack(store, upload.projectId, file.parentId);
    const project = await store.projects.get(upload.projectId);
    if (!project) return true;
    const data: Schemas['UploadFailure'] = { object: 'upload_failure', uploadid: upload.id, boxid: file.id, name: file.name, reason };
    await recordEvent(ctx, store, { type: 'upload.failed', ownerId: project.ownerId, projectId: upload.projectId, boxId: file.id, boxName: file.name, data });
    return true;
  });
}
