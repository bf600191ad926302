/**
 * Downloads: a signed URL for a file (the interface on the download response, "expires" in ms since
 * the epoch), and the endpoint behind it, which serves the bytes with Range
 * (RFC 9110 section 14), ETag and Content-Disposition (RFC 6266). Stored
 * files are hostile: they are served inline only when their bytes are on the
 * allow-list (download-rules.ts `presentation`), never by their declared type.
 */
import type { Readable } from 'node:stream';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { conflict, HttpProblem, notFound, signatureRefused } from '../../lib/problems.ts';
import { artworkBlobKey, fileBlobKey, renditionBlobKey } from '../../blobs/keys.ts';
import { downloadBinding, downloadPath, signDownload, VARIANTS, type Disposition, type Variant } from '../../signing/signed-downloads.ts';
import { byteRange, dispositionHeader, isNotModified, presentation } from './download-rules.ts';
import { SNIFF_HEAD_BYTES, sniffInlineMediaType } from '../../lib/content-sniffing.ts';
import { recheckGrant } from '../listening/player-grants.ts';
import { countDownload } from '../insights/insights-service.ts';
import type { PlayerGrant } from '../../signing/player-grant.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'config' | 'signer' | 'logger'>;

async function downloadableFile(ctx: Ports, caller: Caller, projectId: string, boxId: string) {
  await accessProject(ctx, caller, projectId, 'read');
  const box = await ctx.store.boxes.get(projectId, boxId);
  if (!box) throw notFound(`Project ${projectId} has no file ${boxId}.`);
  if (box.kind !== 'file') throw conflict(`${boxId} is a ${box.kind}; only files can be downloaded.`);
  if (box.status === 'awaiting-upload') throw conflict(`The upload of ${boxId} has not completed yet; there are no bytes to download.`);
  return box;
}

/**
 * A download URL: straight from the bucket when the blob store can sign its
 * own GETs (S3), so that the bytes do not pass through this server; else
 * this server's signed URL. Either way the same rules decide what it is
 * served as (presentation), and `expires` is when it stops working.
 */
async function downloadUrl(ctx: Ports, objectId: string, disposition: Disposition = 'attachment', variant?: Variant): Promise<Schemas['DownloadResponse']> {
  if (ctx.blobs.presignedGet) {
    const object = await findObject(ctx, objectId, variant);
    const stored = object && (await ctx.blobs.stat(object.key));
    if (object && stored) {
      const served = presentation(disposition, await allowListedType(ctx, object, stored.size));
      return ctx.blobs.presignedGet(object.key, {
        now: ctx.clock.now(),
        ttlSeconds: Math.floor(ctx.config.downloadUrlTtlMs / 1000),
        contentType: served.contentType,
        contentDisposition: dispositionHeader(served.disposition, object.name),
        cacheControl: CACHE_CONTROL,
      });
    }
    // No bytes under the key: this server's URL answers that with its 404 problem.
  }
  return signDownload(ctx, objectId, disposition, variant);
}

const CACHE_CONTROL = 'private, max-age=3600';

export async function downloadFile(ctx: Ports, caller: Caller, projectId: string, boxId: string, quality: Schemas['Quality'] = 'original'): Promise<Schemas['DownloadResponse']> {
  const box = await downloadableFile(ctx, caller, projectId, boxId);
  if (quality === 'original') return downloadUrl(ctx, box.id);
  if (!box.audio?.renditions.includes(quality)) {
    const why = box.audio ? 'the source is not lossless integer audio' : `the file is ${box.status === 'failed' ? 'not decodable audio' : 'not analysed yet (status ' + box.status + ')'}`;
    throw conflict(`${boxId} has no ${quality} rendition: ${why}. Renditions available: ${(box.audio?.renditions ?? ['original']).join(', ')}.`);
  }
  return downloadUrl(ctx, box.id, 'attachment', quality);
}

export async function getPeaksUrl(ctx: Ports, caller: Caller, projectId: string, boxId: string, format: 'json' | 'dat' = 'json'): Promise<Schemas['DownloadResponse']> {
  const box = await downloadableFile(ctx, caller, projectId, boxId);
  if (!box.audio) throw conflict(`${boxId} has no waveform peaks: it is not an analysed audio file (status ${box.status}).`);
  // The JSON peaks are fetched by waveform players, inline; the binary ones are served as an attachment whatever the URL says.
  return format === 'dat' ? downloadUrl(ctx, box.id, 'attachment', 'peaks-dat') : downloadUrl(ctx, box.id, 'inline', 'peaks-json');
}

export interface SignedGet {
  objectId: string;
  variant: Variant | undefined;
  expires: number;
  signature: string;
  disposition: Disposition;
  range: string | undefined;
  ifNoneMatch: string | undefined;
  /** The player grant a listener's view bound into the URL, if any. */
  grant?: PlayerGrant;
}

export interface Delivery {
  status: 200 | 206 | 304 | 307;
  headers: Record<string, string>;
  body?: Readable;
}

export async function fetchSignedDownload(ctx: Ports, get: SignedGet): Promise<Delivery> {
  const fields = { method: 'GET' as const, path: downloadPath(get.objectId), expires: get.expires, bound: downloadBinding(get.disposition, get.variant, get.grant) };
  if (!ctx.signer.verify(fields, get.signature)) throw signatureRefused('The download URL was altered: its signature does not match. Use the URL exactly as it was returned.');
  if (ctx.clock.now() > get.expires) throw signatureRefused(`The download URL expired at ${new Date(get.expires).toISOString()}. Ask for a new one.`);
  // A URL from a listener's view works only while its player still allows what it was made for (paywall, downloads, expiry).
  if (get.grant) await recheckGrant(ctx, get.grant, get.variant);

  const object = await findObject(ctx, get.objectId, get.variant);
  const stored = object && (await ctx.blobs.stat(object.key));
  if (!object || !stored) throw notFound('The file of this download URL no longer exists.');
  const size = stored.size;
  // A download through a player's view counts for its insights once, when its bytes are sent from the start (a resumed or
  // seeking range request is the same download going on; a 304 sends none).
  const fromStart = get.range === undefined || /^\s*bytes\s*=\s*0\s*-/i.test(get.range);
  const notModified = !ctx.blobs.presignedGet && isNotModified(get.ifNoneMatch, etagOf(get, size));
  if (fromStart && !notModified) await countDownload(ctx, get.grant, get.objectId);
  // On a bucket: checked here as on disk (signature, expiry, the player's rules), then the bytes come straight from the bucket.
  if (ctx.blobs.presignedGet) return redirectToBucket(ctx, object, size, get);
  const etag = etagOf(get, size);
  const cacheControl = CACHE_CONTROL;
  // RFC 9110 section 13.2.2: If-None-Match is evaluated before Range. A 304
  // carries no body, so it needs no sniffing; section 15.4.5 asks it to repeat
  // the ETag and Cache-Control a 200 would have sent.
  if (isNotModified(get.ifNoneMatch, etag)) return { status: 304, headers: { ETag: etag, 'Cache-Control': cacheControl } };

  const served = presentation(get.disposition, await allowListedType(ctx, object, size));
  const headers: Record<string, string> = {
    'Content-Type': served.contentType,
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Content-Disposition': dispositionHeader(served.disposition, object.name),
    'Cache-Control': cacheControl,
  };
  const range = byteRange(get.range, size);
  if (range === 'unsatisfiable') {
    // RFC 9110 section 15.5.17: a 416 "SHOULD generate a Content-Range header field ... bytes */<complete-length>".
    throw new HttpProblem('range-not-satisfiable', `The range ${get.range} does not overlap this ${size}-byte file.`, {
      headers: { 'Content-Range': `bytes */${size}` },
    });
  }
  if (range) {
    return {
      status: 206,
      headers: { ...headers, 'Content-Range': `bytes ${range.start}-${range.end}/${size}`, 'Content-Length': String(range.end - range.start + 1) },
      body: ctx.blobs.read(object.key, range),
    };
  }
  return { status: 200, headers: { ...headers, 'Content-Length': String(size) }, body: size === 0 ? undefined : ctx.blobs.read(object.key) };
}

/**
 * How long a redirect's presigned GET works, at most. Each use of the
 * server's URL checks the player's rules again; the bucket's URL cannot, so
 * it is kept short: a listener who loses access (a paywall, a new password,
 * the expiry) keeps at most this long on a URL already handed out. A page
 * whose stream fails past it reads the view again (web/player).
 */
export const BUCKET_REDIRECT_TTL_MS = 10 * 60_000;

async function redirectToBucket(ctx: Ports, object: StoredObject, size: number, get: SignedGet): Promise<Delivery> {
  const served = presentation(get.disposition, await allowListedType(ctx, object, size));
  const now = ctx.clock.now();
  // SigV4 signs whole seconds from the start of this one (s3-blob-store.ts); never past the server URL's own expiry.
  const ttlSeconds = Math.max(1, Math.floor((Math.min(get.expires, now + BUCKET_REDIRECT_TTL_MS) - Math.floor(now / 1000) * 1000) / 1000));
  const target = await ctx.blobs.presignedGet!(object.key, {
    now,
    ttlSeconds,
    contentType: served.contentType,
    contentDisposition: dispositionHeader(served.disposition, object.name),
    cacheControl: CACHE_CONTROL,
  });
  // RFC 9110 section 15.4.8: 307 keeps the method (a HEAD stays a HEAD). no-store, so that no cache skips the check above next time.
  return { status: 307, headers: { Location: target.url, 'Cache-Control': 'private, no-store' } };
}

/**
 * The bytes under a key never change (an upload URL works once), so the
 * object id and size make a strong validator. The "r2" marks the serving
 * rules of the inline allow-list: a browser holding a response served by
 * the older rules (by declared type) must not have it revalidated as fresh.
 */
const etagOf = (get: Pick<SignedGet, 'objectId' | 'variant'>, size: number) => `"${get.objectId}${get.variant ? '-' + get.variant : ''}-${size}-r2"`;

interface StoredObject {
  key: string;
  name: string;
  /** The type of an object we made ourselves (a rendition, peaks); absent for uploaded bytes, which are sniffed. */
  knownType?: { contentType: string; inline: boolean };
}

async function findObject(ctx: Ports, objectId: string, variant: Variant | undefined): Promise<StoredObject | undefined> {
  if (objectId.startsWith('art_')) {
    if (variant) return undefined;
    const artwork = await ctx.store.projects.getArtwork(objectId);
    return artwork && { key: artworkBlobKey(artwork.projectId, artwork.id), name: `artwork.${artwork.contentType.split('/')[1]}` };
  }
  const box = await ctx.store.boxes.findFile(objectId);
  if (!box || box.status === 'awaiting-upload') return undefined;
  if (variant) {
    const { contentType, extension, inline } = VARIANTS[variant];
    return { key: renditionBlobKey(box.projectId, objectId, variant), name: box.name.replace(/\.[^.]*$/, '') + extension, knownType: { contentType, inline } };
  }
  return { key: fileBlobKey(box.projectId, objectId), name: box.name };
}

/**
 * The object's type when it is on the inline allow-list, else undefined. For
 * uploaded bytes (originals, artwork) it is sniffed from their first bytes:
 * one small ranged read, whatever the size of the blob; the type the uploader
 * declared plays no part.
 */
async function allowListedType(ctx: Ports, object: StoredObject, size: number): Promise<string | undefined> {
  if (object.knownType) return object.knownType.inline ? object.knownType.contentType : undefined;
  if (size === 0) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.blobs.read(object.key, { start: 0, end: Math.min(size, SNIFF_HEAD_BYTES) - 1 })) chunks.push(chunk as Buffer);
  return sniffInlineMediaType(Buffer.concat(chunks));
}
