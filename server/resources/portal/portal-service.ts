/**
 * Players' public upload portals (the interface on the players operations, the player option
 * `upload`): anyone with the link sends files into the player's project,
 * resumably, over tus 1.0.0 (portal-tus.ts carries the protocol; this file
 * the rules). A file lands like any other upload, in a stack of its own,
 * analysed when it is audio, with the webhook events of uploads; but in the
 * portal's held folder ("Portal uploads"), which no player shows until a
 * project member moves the file out. Every limit is
 * checked when the upload is created, before a byte is sent, and the portal
 * is read again on every request, so that closing it stops uploads under way.
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Store } from '../../repositories.ts';
import { badRequest, HttpProblem, notFound, tooLarge, unsupportedMediaType } from '../../lib/problems.ts';
import { playerExpired } from '../../http/listener-problems.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { newBox } from '../boxes/boxes-service.ts';
import { stackNameFor } from '../boxes/version-marker.ts';
import { requireRoomFor } from '../uploads/uploads-service.ts';
import { recordFileEvent } from '../uploads/upload-events.ts';
import { notifyOfPortalUpload } from '../notifications/notifications-service.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import { portalUploadDir } from '../../blobs/partial-uploads.ts';
import { settleStoredFile } from '../uploads/stored-file.ts';
import { SNIFF_HEAD_BYTES } from '../../lib/content-sniffing.ts';
import { acceptFile, checkFileName, checkUploader } from './portal-rules.ts';
import type { PortalUploadRecord } from './portal-repository.ts';

/** A player as the store reads it: the portal reads players only through the store, and players depend on the portal (closing it), not the reverse. */
export type PortalPlayer = NonNullable<Awaited<ReturnType<Store['players']['get']>>>;

/** Why an unfinished upload is given up when its portal closes, as upload.failed says it. */
export const CLOSED_BEFORE_COMPLETE = 'The portal was closed before the upload was complete; its bytes were removed.';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'signer' | 'logger' | 'jobQueued'>;

/** Where tus keeps the bytes of uploads under way, under DATA_DIR. */
// Kept below the resources, so that deleting a project can remove the partial bytes of its portal uploads.
export { portalUploadDir } from '../../blobs/partial-uploads.ts';

/** Removes what tus keeps of an upload: its partial bytes and its record of them (`<id>.json`). */
export async function removePartialBytes(ctx: Pick<Ports, 'config'>, uploadId: string): Promise<void> {
  const path = join(portalUploadDir(ctx.config.dataDir), uploadId);
  await Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]);
}

/** The folder a portal files its uploads in when its player is not scoped to a folder. */
export const PORTAL_FOLDER_NAME = 'Portal uploads';

const closed = (playerId: string) => notFound(`There is no open upload portal at ${playerId}: the link is wrong, or its owner closed the portal.`);

/**
 * The player whose portal is open, or the refusal: 404 when there is no
 * such player or its portal is off (the two look alike, so a closed portal
 * does not tell that the player exists), 410 when its link has expired.
 */
export async function openPortal(ctx: Pick<Ports, 'store' | 'clock'>, playerId: string): Promise<PortalPlayer> {
  const player = await ctx.store.players.get(playerId);
  if (!player?.upload?.enabled) throw closed(playerId);
  if (player.expires !== null && ctx.clock.now() >= player.expires) throw playerExpired(player.expires);
  return player;
}

/**
 * The upload, when it belongs to this open portal and still takes bytes.
 * Checked on every request after the creation (HEAD, PATCH, DELETE), so an
 * upload URL of one portal opens nothing in another, and a closed portal
 * refuses the next request of every upload under way.
 */
export async function requireOpenUpload(ctx: Pick<Ports, 'store' | 'clock'>, player: PortalPlayer, uploadId: string): Promise<PortalUploadRecord> {
  const upload = await ctx.store.portal.get(uploadId);
  if (!upload || upload.playerId !== player.id) throw notFound(`This upload portal has no upload ${uploadId}. Start the upload again.`);
  if (upload.timeCompleted !== null) throw notFound(`The upload ${uploadId} is complete: its file is with the project already.`);
  return upload;
}

/** What a tus creation request declares: Upload-Length and the decoded Upload-Metadata. */
export interface NewPortalUpload {
  uploadId: string;
  size: number | undefined;
  metadata: Record<string, string | null | undefined>;
  /** The bytes the creation request itself carries (tus creation-with-upload), which it claims room for; 0 without a body. */
  bodyBytes: number;
}

/**
 * Creates the upload: checks the file and the uploader, the size against
 * the per-file cap, the portal's total and the owner's storage quota, then,
 * in one transaction, makes the file box (awaiting its bytes, in a stack of
 * its own), the portal's record of the upload and the upload.started event.
 * Every refusal comes before a byte of the file is sent.
 */
export async function createUpload(ctx: Ports, player: PortalPlayer, request: NewPortalUpload): Promise<BoxRecord> {
  // tus 1.0.0, creation extension: "If the length of the upload is not known, the Client MAY set the Upload-Defer-Length header" — not taken
  // here: every cap is checked against the declared length, before the bytes.
  if (request.size === undefined) throw badRequest('Declare the file\'s size in Upload-Length: this portal checks it before the upload starts.', [{ header: 'upload-length', detail: 'is required' }]);
  const name = checkFileName(request.metadata.filename);
  const uploader = checkUploader(request.metadata.name, request.metadata.email);
  const accepted = acceptFile(name, request.metadata.filetype ?? '');
  const { portal } = ctx.config;
  const perFile = Math.min(portal.maxFileBytes, ctx.config.maxUploadBytes);
  if (request.size > perFile) throw tooLarge(`${name} is ${request.size} bytes, over this portal's limit of ${perFile} bytes per file.`);
  const now = ctx.clock.now();
  const projectId = player.projectId;

  return ctx.store.transaction(async (store) => {
    // The project's row first, as every box write takes it: two uploads at once queue here, so the totals below hold.
    if (!(await store.boxes.lockProject(projectId))) throw closed(player.id);
    // The declared length must fit in the room left, though it reserves none: only bytes received (or a request's announced bytes,
    // while it streams them) take room, so that declarations without bytes cannot fill a portal or its owner's quota.
    const received = await store.portal.bytesTakenBy(player.id);
    if (received + request.size! > portal.maxTotalBytes) {
      throw new HttpProblem('payload-too-large',
        `This portal has room for ${Math.max(0, portal.maxTotalBytes - received)} more bytes, and ${name} is ${request.size} bytes. Ask the portal's owner to make room.`,
      );
    }
    const project = await store.projects.get(projectId);
    if (!project) throw closed(player.id);
    await requireRoomFor(ctx, store, project.ownerId, projectId, request.size!);
    const folderId = await portalFolder(store, player, now);
    // Named as every upload's stack is (the studio's rules): "A stack that an upload makes is named after the file without its extension".
    const stack = newBox({ projectId, kind: 'stack', name: stackNameFor(name), parentId: folderId, position: await store.boxes.nextPosition(projectId, folderId) }, now);
    await store.boxes.insert(stack);
    const file = newBox(
      {
        projectId,
        kind: 'file',
        name,
        parentId: stack.id,
        position: 0,
        status: 'awaiting-upload',
        size: request.size!,
        mimeType: accepted.mimeType,
        uploaderName: uploader.name,
        uploaderEmail: uploader.email,
      },
      now,
    );
    await store.boxes.insert(file);
    await store.portal.insert({
      id: request.uploadId,
      playerId: player.id,
      projectId,
      boxId: file.id,
      size: request.size!,
      roomBytes: Math.min(request.bodyBytes, request.size!),
      timeCreated: now,
    });
    await recordFileEvent(ctx, store, 'upload.started', project.ownerId, file);
    return file;
  });
}

/**
 * Claims the room of the bytes a request is about to send (a PATCH from
 * `offset`, announcing `bytes`): the upload then takes `offset + bytes`
 * until the request ends and its stored bytes are counted (settleRoom).
 * Refused with 413, before a byte is taken, when that would take the portal
 * over its total or the owner over their storage quota; checked with the
 * project's row locked, so that two requests at once cannot both take the
 * last room.
 */
export async function claimRoom(ctx: Ports, player: PortalPlayer, upload: PortalUploadRecord, offset: number, bytes: number): Promise<void> {
  const end = Math.min(offset + bytes, upload.size);
  await ctx.store.transaction(async (store) => {
    if (!(await store.boxes.lockProject(upload.projectId))) throw closed(player.id);
    const current = await store.portal.get(upload.id);
    if (!current || current.timeCompleted !== null) return;
    const more = end - current.roomBytes;
    if (more <= 0) return;
    const taken = await store.portal.bytesTakenBy(player.id);
    if (taken + more > ctx.config.portal.maxTotalBytes) {
      throw new HttpProblem('payload-too-large',
        `This portal has room for ${Math.max(0, ctx.config.portal.maxTotalBytes - taken)} more bytes, and these would take ${more}. Ask the portal's owner to make room.`,
      );
    }
    const project = await store.projects.get(upload.projectId);
    if (!project) throw closed(player.id);
    await requireRoomFor(ctx, store, project.ownerId, upload.projectId, more);
    await store.portal.setRoom(upload.id, end);
  });
}

/** Once a request that sent bytes ends: the unfinished upload takes the room of the bytes stored, `stored`. */
export async function settleRoom(ctx: Pick<Ports, 'store'>, uploadId: string, stored: number): Promise<void> {
  await ctx.store.portal.setRoom(uploadId, stored);
}

/**
 * Closing a portal gives up its unfinished uploads: their files (waiting for
 * their bytes) go, with the room they took, and upload.failed says why;
 * then their partial bytes (a request still writing them is cut within
 * PORTAL_WATCH_MS, and removes what it wrote after this, portal-tus.ts).
 */
export async function releasePortal(ctx: Pick<Ports, 'store' | 'clock' | 'jobQueued' | 'config'> & Partial<Pick<Ports, 'logger'>>, playerId: string): Promise<void> {
  for (const upload of await ctx.store.portal.listUnfinishedOf(playerId)) {
    await abandon(ctx, upload, CLOSED_BEFORE_COMPLETE);
    await removePartialBytes(ctx, upload.id).catch((error: unknown) => ctx.logger?.error('removing the bytes of a closed portal\'s upload failed', { err: error, uploadId: upload.id }));
  }
}

/**
 * Where the portal's files go: the portal's own folder ("Portal uploads"),
 * held, so that no player shows what a stranger sent until a project member
 * moves it out (listening/player-tracks.ts). Made on the first upload, at
 * the top of the project, and remembered on the player, so that it is made
 * once even if its owner renames or moves it; made again only if it was
 * deleted. Always this folder, also when the player is scoped to a folder:
 * that folder is what the player shows.
 */
async function portalFolder(store: Store, player: PortalPlayer, now: number): Promise<string> {
  const remembered = await store.portal.folderOf(player.id);
  if (remembered) {
    const folder = await store.boxes.get(player.projectId, remembered);
    if (folder?.kind === 'folder' && folder.held) return folder.id;
  }
  const folder = newBox(
    { projectId: player.projectId, kind: 'folder', name: PORTAL_FOLDER_NAME, parentId: null, position: await store.boxes.nextPosition(player.projectId, null), held: true },
    now,
  );
  await store.boxes.insert(folder);
  await store.portal.setFolder(player.id, folder.id);
  return folder.id;
}

/**
 * Takes a finished upload's bytes (the file at `path`, which tus wrote)
 * into the blob store as the file's original, then, in one transaction,
 * completes the upload, moves the file to pending (audio, with its analysis
 * queued) or ready, and records upload.completed. A portal closed meanwhile,
 * or bytes that are not what the file claimed, are refused, and the file
 * and its bytes go.
 */
export async function finishUpload(ctx: Ports, playerId: string, uploadId: string, path: string): Promise<void> {
  const upload = await ctx.store.portal.get(uploadId);
  if (!upload || upload.playerId !== playerId) throw closed(playerId);
  try {
    await openPortal(ctx, playerId);
    const file = await ctx.store.boxes.get(upload.projectId, upload.boxId);
    if (!file) throw notFound(`The file of upload ${uploadId} was deleted during the upload.`);
    const accepted = acceptFile(file.name, file.mimeType ?? '');
    const refusal = accepted.check?.(await head(path));
    if (refusal) throw unsupportedMediaType(refusal);
  } catch (error) {
    await abandon(ctx, upload, error instanceof HttpProblem ? error.detail : 'The upload could not be completed.');
    throw error;
  }
  const key = fileBlobKey(upload.projectId, upload.boxId);
  // On disk a rename (DATA_DIR holds both); on S3 an upload of the finished file.
  await ctx.blobs.adopt(key, path);
  const done = await ctx.store.transaction(async (store) => {
    await store.boxes.lockProject(upload.projectId);
    const file = await store.boxes.get(upload.projectId, upload.boxId);
    if (!file || !(await store.portal.complete(uploadId, ctx.clock.now()))) return undefined;
    await settleStoredFile(ctx, store, file, acceptFile(file.name, file.mimeType ?? '').audio);
    await notifyOfPortalUpload(ctx, store, file, playerId);
    return file;
  });
  if (!done) {
    await ctx.blobs.delete(key).catch((error: unknown) => ctx.logger.error('removing the bytes of a deleted portal file failed; the sweep removes them later', { err: error, key }));
    return;
  }
  ctx.jobQueued();
}

/** The first bytes of the stored file, for the sniffers. */
async function head(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Gives up an upload: its file box (and the stack made for it, now empty)
 * and its record go, and upload.failed says why, in one transaction. Also
 * what a tus termination (DELETE) does.
 */
export async function abandon(ctx: Pick<Ports, 'store' | 'clock' | 'jobQueued'>, upload: PortalUploadRecord, reason: string): Promise<void> {
  await ctx.store.transaction(async (store) => {
    await store.boxes.lockProject(upload.projectId);
    const file = await store.boxes.get(upload.projectId, upload.boxId);
    await store.portal.delete(upload.id);
    if (!file) return;
    await store.boxes.delete(upload.projectId, file.id);
    if (file.parentId && (await store.boxes.children(file.parentId)).length === 0) {
      const stack = await store.boxes.get(upload.projectId, file.parentId);
      if (stack?.kind === 'stack') await store.boxes.delete(upload.projectId, stack.id);
    }
    const project = await store.projects.get(upload.projectId);
    if (!project) return;
    const data: Schemas['UploadFailure'] = { object: 'upload_failure', uploadid: upload.id, boxid: file.id, name: file.name, reason };
    await recordEvent(ctx, store, { type: 'upload.failed', ownerId: project.ownerId, projectId: upload.projectId, boxId: file.id, boxName: file.name, data });
  });
}
