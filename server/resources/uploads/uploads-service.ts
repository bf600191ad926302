/**
 * Uploads in two steps (the interface on the files and upload operations): a caller asks for a signed URL, then
 * PUTs the bytes to it without a bearer token. The URL is the server's own;
 * its signature binds the upload, its expiry, the declared size, the content
 * type and the x-storage-meta-* headers. It works once.
 */
import type { Readable } from 'node:stream';
import type { Context } from '../../context.ts';
import { apiRoot } from '../../lib/api-root.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { badRequest, HttpProblem, notFound, signatureRefused, tooLarge, unsupportedMediaType } from '../../lib/problems.ts';
import { BlobTooLargeError, BlobTooShortError } from '../../blobs/blob-store.ts';
import { artworkBlobKey, fileBlobKey } from '../../blobs/keys.ts';
import { boxJson } from '../boxes/boxes-service.ts';
import { placeFileBox, type PlacedFile } from './file-boxes.ts';
import { projectJson } from '../projects/projects-service.ts';
import type { UploadKind, UploadRecord } from './upload-repository.ts';
import { claimLost, seconds, UploadClaim } from './upload-claim.ts';
import type { Store } from '../../repositories.ts';
import { sniffImageType, ARTWORK_TYPES } from '../../lib/content-sniffing.ts';
import { isAudioFile } from '../processing/processing.ts';
import { settleStoredFile } from './stored-file.ts';
import { recordFileEvent, recordUploadFailure } from './upload-events.ts';
import { recordEvent } from '../webhooks/outbox.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'signer' | 'logger' | 'jobQueued'>;

/** The interface on the upload URL request: size is "number or string"; a string must be decimal digits (the schema checked that). */
export function declaredSize(size: number | string, limit: number, what: string): number {
  const bytes = typeof size === 'number' ? size : Number(size);
  if (!Number.isSafeInteger(bytes)) throw badRequest(`size ${size} is not a whole number of bytes.`, [{ pointer: '#/size', detail: 'must be a whole number of bytes' }]);
  if (bytes > limit) throw tooLarge(`The declared size ${bytes} bytes is over the ${what} limit of ${limit} bytes.`);
  return bytes;
}

/**
 * Refuses an upload URL whose declared `size` would take the account that
 * owns the project over its storage quota, before any URL is issued. The
 * quota is the account's own when an administrator set one (POST
 * /admin/users/{userid}, `storageQuota`), else the server's
 * (STORAGE_QUOTA_BYTES). Call it in the transaction that reserves the bytes
 * (the box or the upload row): the owner's row is locked until that
 * commits, so two uploads into the account's projects cannot both take the
 * last room.
 */
export async function requireRoomFor(ctx: Ports, store: Store, ownerId: string, projectId: string, size: number): Promise<void> {
  const quota = quotaOf(ctx, (await store.users.get(ownerId))?.storageQuota ?? null);
  if (quota === null) return;
  await store.users.getForUpdate(ownerId);
  const used = await store.uploads.bytesOwnedBy(ownerId);
  if (used + size <= quota) return;
  throw new HttpProblem('storage-quota-exceeded',
    `This upload of ${size} bytes would take the account that owns project ${projectId} to ${used + size} bytes of its quota of ${quota} bytes (${used} used). Delete files of its projects, or ask the operator for a larger quota.`,
    { members: { quota, used } },
  );
}

/**
 * The bytes the caller's account keeps and the most it may keep: the same
 * count and quota that requireRoomFor checks an upload against, so that what
 * the storage page shows is what refuses an upload.
 */
export async function storageUsage(ctx: Pick<Ports, 'store' | 'config'>, caller: Caller): Promise<Schemas['StorageUsage']> {
  const user = await ctx.store.users.get(caller.id);
  return { used: await ctx.store.uploads.bytesOwnedBy(caller.id), quota: quotaOf(ctx, user?.storageQuota ?? null) };
}

/** The account's own quota when an administrator set one, else the server's (STORAGE_QUOTA_BYTES); null for none. */
const quotaOf = (ctx: Pick<Ports, 'config'>, own: number | null): number | null => own ?? ctx.config.storageQuotaBytes ?? null;

const uploadPath = (kind: UploadKind, uploadId: string) => `/upload/${kind === 'file' ? 'files' : 'artwork'}/${uploadId}`;

/** The x-storage-meta-<key> headers of an upload. The interface on the files and upload operations: "The metadata headers use the prefix x-storage-meta-". */
const metadataHeaders = (metadata: Record<string, string>) =>
  Object.fromEntries(Object.entries(metadata).map(([key, value]) => [`x-storage-meta-${key}`, value]));

/** Every header the PUT must carry, ready to send: what the upload URL response gives as `headers`. */
const putHeaders = (upload: Pick<UploadRecord, 'contentType' | 'metadata'>): Schemas['UploadHeaders'] => ({
  'Content-Type': upload.contentType,
  ...metadataHeaders(upload.metadata),
});

function signedFields(upload: Pick<UploadRecord, 'id' | 'kind' | 'expires' | 'contentType' | 'size' | 'metadata'>) {
  return {
    method: 'PUT' as const,
    path: uploadPath(upload.kind, upload.id),
    expires: upload.expires,
    bound: { contentType: upload.contentType, size: upload.size, ...metadataHeaders(upload.metadata) },
  };
}

function signedUrl(ctx: Ports, upload: UploadRecord): string {
  const signature = ctx.signer.sign(signedFields(upload));
  return `${apiRoot(ctx.config)}${uploadPath(upload.kind, upload.id)}?${new URLSearchParams({ expires: String(upload.expires), signature })}`;
}

/** The file a member uploads, as requestUploadUrl is asked for it (and a resumable upload's Upload-Length and Upload-Metadata). */
export type NewFileBox = Pick<Schemas['UploadUrlRequest'], 'name' | 'mimeType' | 'parentid' | 'autoStack'> & { size: number };

/**
 * Makes the file box a member's upload fills, `awaiting-upload`, and records
 * upload.started: every way a project member uploads a file (an upload URL,
 * a resumable upload) makes its box here, so that they land alike, stacking
 * themselves by the version markers of their names (placeFileBox). Locks the
 * project's row and checks the declared size against the owner's quota
 * (requireRoomFor); call it inside the transaction that records the upload.
 */
export async function createFileBox(
  ctx: Ports,
  store: Store,
  caller: Caller,
  project: { id: string; ownerId: string },
  request: NewFileBox,
): Promise<PlacedFile> {
  // The project's row first, as every box write takes it: the quota check and the new box see the same state.
  await store.boxes.lockProject(project.id);
  await requireRoomFor(ctx, store, project.ownerId, project.id, request.size);
  const placed = await placeFileBox(
    store,
    { projectId: project.id, parentId: request.parentid, name: request.name, mimeType: request.mimeType, size: request.size, uploaderId: caller.id, autoStack: request.autoStack },
    ctx.clock.now(),
  );
  await recordFileEvent(ctx, store, 'upload.started', project.ownerId, placed.file);
  return placed;
}

export async function requestUploadUrl(ctx: Ports, caller: Caller, projectId: string, body: Schemas['UploadUrlRequest']): Promise<Schemas['UploadUrlResponse']> {
  const { project } = await accessProject(ctx, caller, projectId, 'write');
  const size = declaredSize(body.size, ctx.config.maxUploadBytes, 'upload');
  const now = ctx.clock.now();
  return ctx.store.transaction(async (store) => {
    const { file, stack, autoStacked } = await createFileBox(ctx, store, caller, project, { ...body, size });
    const upload: UploadRecord = {
      id: newId('upl'),
      kind: 'file',
      projectId,
      userId: caller.id,
      objectId: file.id,
      name: body.name,
      contentType: body.mimeType,
      size,
      metadata: { boxpath: `projects/${projectId}/boxes/${file.id}`, destination: 'file', projectid: projectId },
      expires: now + ctx.config.uploadUrlTtlMs,
      timeCreated: now,
      timeStarted: null,
      timeCompleted: null,
      claimToken: null,
      claimExpires: null,
    };
    await store.uploads.insert(upload);
    return {
      boxid: file.id,
      contentType: upload.contentType,
      metadata: upload.metadata as Schemas['UploadUrlResponse']['metadata'],
      headers: putHeaders(upload),
      stackid: stack.id,
      parentid: stack.parentId,
      autoStacked,
      ...(file.versionName !== null && autoStacked ? { versionName: file.versionName } : {}),
      url: signedUrl(ctx, upload),
      expires: upload.expires,
    };
  });
}

export async function requestArtworkUploadUrl(
  ctx: Ports,
  caller: Caller,
  projectId: string,
  body: Schemas['ArtworkUploadUrlRequest'],
): Promise<Schemas['ArtworkUploadUrlResponse']> {
  const { project } = await accessProject(ctx, caller, projectId, 'write');
  // The interface on the files and upload operations: "mimeType (string; must be an image type) … Non-image uploads are rejected."
  if (!ARTWORK_TYPES.includes(body.mimeType.toLowerCase())) {
    throw unsupportedMediaType(`Artwork must be an image (${ARTWORK_TYPES.join(', ')}); got ${body.mimeType}.`);
  }
  const size = declaredSize(body.size, ctx.config.maxArtworkBytes, 'artwork');
  const now = ctx.clock.now();
  const artworkId = newId('art');
  const upload: UploadRecord = {
    id: newId('upl'),
    kind: 'artwork',
    projectId,
    userId: caller.id,
    objectId: artworkId,
    name: body.name,
    contentType: body.mimeType.toLowerCase(),
    size,
    metadata: { boxpath: `projects/${projectId}/artwork/${artworkId}`, destination: 'artwork', projectid: projectId, writeback: 'project.artwork' },
    expires: now + ctx.config.uploadUrlTtlMs,
    timeCreated: now,
    timeStarted: null,
    timeCompleted: null,
    claimToken: null,
    claimExpires: null,
  };
  await ctx.store.transaction(async (store) => {
    await requireRoomFor(ctx, store, project.ownerId, projectId, size);
    await store.uploads.insert(upload);
  });
  return {
    boxid: artworkId,
    contentType: upload.contentType,
    metadata: upload.metadata as Schemas['ArtworkUploadUrlResponse']['metadata'],
    headers: putHeaders(upload),
    url: signedUrl(ctx, upload),
    expires: upload.expires,
  };
}

export interface PutRequest {
  kind: UploadKind;
  uploadId: string;
  expires: number;
  signature: string;
  contentType: string | undefined;
  contentLength: number | undefined;
  /** The x-storage-meta-* headers sent, by key. */
  metadata: Record<string, string | undefined>;
  body: Readable;
}

/** Checks a PUT against its upload before a byte is read, and claims the upload for it. Every refusal stores nothing. */
async function admit(ctx: Ports, put: PutRequest): Promise<{ upload: UploadRecord; claim: UploadClaim }> {
  const upload = await ctx.store.uploads.get(put.uploadId);
  if (!upload || upload.kind !== put.kind) throw notFound(`There is no upload ${put.uploadId}. Request a new upload URL.`);
  // Checked against the URL's own expiry: the signature was made over the upload's, so any other fails.
  if (!ctx.signer.verify({ ...signedFields(upload), expires: put.expires }, put.signature)) {
    throw signatureRefused('The upload URL was altered: its signature does not match. Use the URL exactly as it was returned.');
  }
  if (ctx.clock.now() > upload.expires) {
    throw signatureRefused(`The upload URL expired at ${new Date(upload.expires).toISOString()}. Request a new upload URL.`);
  }
  // The signature binds these headers: a changed one is refused like a changed URL.
  const sentType = put.contentType?.split(';')[0].trim().toLowerCase();
  if (sentType !== upload.contentType.toLowerCase()) {
    throw signatureRefused(`Content-Type is "${put.contentType}", but the upload URL was signed for "${upload.contentType}". Send the contentType returned with the URL.`);
  }
  for (const [key, value] of Object.entries(upload.metadata)) {
    if (put.metadata[key] !== value) {
      throw signatureRefused(`The x-storage-meta-${key} header does not match the signed upload URL. Send "${value}", as returned in metadata.${key}.`);
    }
  }
  if (upload.timeCompleted !== null) throw alreadyUsed();
  if (put.contentLength !== undefined && put.contentLength > upload.size) {
    throw tooLarge(`The body has ${put.contentLength} bytes, more than the declared size of ${upload.size}. Request a new upload URL with the right size.`);
  }
  if (put.contentLength !== undefined && put.contentLength < upload.size) {
    throw badRequest(`The body has ${put.contentLength} bytes, fewer than the declared size of ${upload.size}. Send the whole file.`);
  }
  const claim = await UploadClaim.take(ctx, upload);
  if (!claim) {
    // Read again: it may have completed since, or its claim may be one a dead server left, which lapses at its deadline.
    const current = await ctx.store.uploads.get(upload.id);
    if (!current) throw notFound(`There is no upload ${put.uploadId}. Request a new upload URL.`);
    if (current.timeCompleted !== null) throw alreadyUsed();
    const wait = Math.max(1000, (current.claimExpires ?? 0) - ctx.clock.now());
    throw new HttpProblem('upload-already-used',
      `Another PUT to this upload URL is under way; each upload URL stores one file. If that PUT was cut off, its claim lapses within ${seconds(wait)}; then send the whole file again.`,
    );
  }
  return { upload, claim };
}

const alreadyUsed = () => new HttpProblem('upload-already-used', 'This upload URL was already used to store the bytes. Request a new upload URL to upload again.');

/**
 * Streams the body to the blob store under the PUT's claim. On any failure
 * (a refused body, a dropped connection, a lost or stalled claim) nothing is
 * kept and the claim is given back.
 */
async function receive(ctx: Ports, upload: UploadRecord, claim: UploadClaim, put: PutRequest, key: string, inspectHead?: (head: Buffer) => void) {
  try {
    await ctx.blobs.write(key, put.body, {
      expectedSize: upload.size,
      inspectHead,
      onProgress: claim.progress,
      signal: claim.signal,
      beforeCommit: () => claim.confirm(),
    });
  } catch (error) {
    await claim.release();
    const problem = claim.signal.aborted
      ? claim.signal.reason
      : error instanceof BlobTooLargeError
        ? tooLarge(`The body is longer than the declared size of ${upload.size} bytes. Request a new upload URL with the right size.`)
        : error instanceof BlobTooShortError
          ? badRequest(`The body ended after ${error.message}. Send the whole file.`)
          : error;
    const reason = problem instanceof HttpProblem ? problem.detail : 'The upload was cut off before all of its bytes arrived.';
    await ctx.store
      .transaction((store) => recordUploadFailure(ctx, store, upload, `${reason} The upload URL can be used again until it expires.`))
      .catch((eventError: unknown) => ctx.logger.error('recording an upload.failed event failed', { err: eventError, uploadId: upload.id }));
    throw problem;
  }
}

/** The upload was deleted (with its project) while its bytes were on the way. */
class UploadGone extends Error {}

/**
 * Completes the upload and runs `work` in one transaction, once its bytes
 * are stored under `key`. Should that transaction fail, the bytes are taken
 * away again and the claim given back: nothing is half done, and the URL
 * can be used again. The bytes stay only where they may be in use: when the
 * claim was lost (they may be the new holder's), or when it cannot be told
 * whether the commit landed (the database went away during COMMIT); the
 * sweep judges those later, by the records.
 */
async function commit<T>(ctx: Ports, upload: UploadRecord, claim: UploadClaim, key: string, work: (store: Store) => Promise<T>): Promise<T> {
  let lost = false;
  try {
    return await ctx.store.transaction(async (store) => {
      if (!(await store.uploads.complete(upload.id, claim.token, ctx.clock.now()))) {
        if (!(await store.uploads.get(upload.id))) throw new UploadGone();
        lost = true;
        throw claimLost();
      }
      return await work(store);
    });
  } catch (error) {
    if (error instanceof UploadGone) {
      await deleteBlob(ctx, key, upload.id);
      throw notFound(`The project ${upload.projectId} was deleted during the upload.`);
    }
    if (!lost && (await rolledBack(ctx, upload.id))) await deleteBlob(ctx, key, upload.id);
    await claim.release();
    throw error;
  } finally {
    claim.stop();
  }
}

/** Whether a failed commit surely left the upload incomplete; false when the database cannot say. */
async function rolledBack(ctx: Ports, uploadId: string): Promise<boolean> {
  try {
    return (await ctx.store.uploads.get(uploadId))?.timeCompleted === null;
  } catch (error) {
    ctx.logger.error('after a failed upload commit, its outcome could not be read; the sweep judges the bytes later', { err: error, uploadId });
    return false;
  }
}

/** Removes bytes nothing points at; if that fails, the sweep finds them later. */
async function deleteBlob(ctx: Ports, key: string, uploadId: string) {
  try {
    await ctx.blobs.delete(key);
  } catch (error) {
    ctx.logger.error('removing the bytes of an upload that did not complete failed; the sweep removes them later', { err: error, key, uploadId });
  }
}

export async function putFile(ctx: Ports, put: PutRequest): Promise<Schemas['FileBox']> {
  const { upload, claim } = await admit(ctx, put);
  const key = fileBlobKey(upload.projectId, upload.objectId);
  await receive(ctx, upload, claim, put, key);
  const box = await commit(ctx, upload, claim, key, async (store) => {
    const file = await store.boxes.get(upload.projectId, upload.objectId);
    if (!file) {
      // The file was deleted while its bytes were on the way; its upload goes with it.
      await store.uploads.delete(upload.id);
      return undefined;
    }
    await settleStoredFile(ctx, store, file, isAudioFile(file.name, file.mimeType));
    return file;
  });
  if (!box) {
    await deleteBlob(ctx, key, upload.id);
    throw notFound(`The file ${upload.objectId} was deleted during the upload.`);
  }
  ctx.jobQueued();
  return boxJson(box) as Schemas['FileBox'];
}

export async function putArtwork(ctx: Ports, put: PutRequest): Promise<Schemas['Project']> {
  const { upload, claim } = await admit(ctx, put);
  const key = artworkBlobKey(upload.projectId, upload.objectId);
  await receive(ctx, upload, claim, put, key, (head) => {
    // The declared type is not trusted: the bytes must be that kind of image.
    const sniffed = sniffImageType(head);
    if (!sniffed) throw unsupportedMediaType('The uploaded bytes are not a JPEG, PNG, WebP or GIF image.');
    if (sniffed !== upload.contentType) throw unsupportedMediaType(`The uploaded bytes are ${sniffed}, but the upload was declared as ${upload.contentType}.`);
  });
  const now = ctx.clock.now();
  const previous = await commit(ctx, upload, claim, key, async (store) => {
    // Locked, so that two artwork uploads at once cannot both see the same previous image and leave one behind.
    const project = await store.projects.getForUpdate(upload.projectId);
    await store.projects.insertArtwork({ id: upload.objectId, projectId: upload.projectId, contentType: upload.contentType, size: upload.size, timeCreated: now });
    // The interface on the box states: "The uploaded image is set as the project artwork".
    const updated = await store.projects.update(upload.projectId, { artworkId: upload.objectId }, now);
    if (updated) await recordEvent(ctx, store, { type: 'project.updated', ownerId: updated.ownerId, projectId: updated.id, data: await projectJson({ ...ctx, store }, updated, 'owner') });
    return project?.artworkId;
  });
  if (previous) {
    const previousKey = artworkBlobKey(upload.projectId, previous);
    try {
      await ctx.blobs.delete(previousKey);
    } catch (error) {
      // The project shows the new image either way; the sweep removes the old bytes later.
      ctx.logger.error('removing the replaced artwork failed', { err: error, key: previousKey, projectId: upload.projectId });
    }
  }
  // The PUT carries no bearer token; the project is shown as the user who asked for the URL sees it.
  const uploader = (await ctx.store.users.get(upload.userId))!;
  const role = (await ctx.store.projects.roleOf(upload.projectId, uploader)) ?? 'viewer';
  return projectJson(ctx, (await ctx.store.projects.get(upload.projectId))!, role);
}

export { sweepAbandonedUploads } from './upload-sweeper.ts';

