/**
 * Downloads: a signed URL for a file (interface 2.5, "expires" in ms since
 * the epoch), and the endpoint behind it, which serves the bytes with Range
 * (RFC 9110 section 14), ETag and Content-Disposition (RFC 6266).
 */
import type { Readable } from 'node:stream';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { conflict, HttpProblem, notFound, signatureRefused } from '../../http/problem.ts';
import { artworkBlobKey, fileBlobKey, renditionBlobKey } from '../../blobs/keys.ts';
import { downloadBinding, downloadPath, signDownload, VARIANTS, type Disposition, type Variant } from './signed-downloads.ts';

async function downloadableFile(ctx: Context, caller: Caller, projectId: string, boxId: string) {
  await accessProject(ctx, caller, projectId, 'read');
  const box = await ctx.store.boxes.get(projectId, boxId);
  if (!box) throw notFound(`Project ${projectId} has no file ${boxId}.`);
  if (box.kind !== 'file') throw conflict(`${boxId} is a ${box.kind}; only files can be downloaded.`);
  if (box.status === 'awaiting-upload') throw conflict(`The upload of ${boxId} has not completed yet; there are no bytes to download.`);
  return box;
}

export async function downloadFile(ctx: Context, caller: Caller, projectId: string, boxId: string, quality: Schemas['Quality'] = 'original'): Promise<Schemas['DownloadResponse']> {
  const box = await downloadableFile(ctx, caller, projectId, boxId);
  if (quality === 'original') return signDownload(ctx, box.id);
  if (!box.audio?.renditions.includes(quality)) {
    const why = box.audio ? 'the source is not lossless integer audio' : `the file is ${box.status === 'failed' ? 'not decodable audio' : 'not analysed yet (status ' + box.status + ')'}`;
    throw conflict(`${boxId} has no ${quality} rendition: ${why}. Renditions available: ${(box.audio?.renditions ?? ['original']).join(', ')}.`);
  }
  return signDownload(ctx, box.id, 'attachment', quality);
}

export async function getPeaksUrl(ctx: Context, caller: Caller, projectId: string, boxId: string, format: 'json' | 'dat' = 'json'): Promise<Schemas['DownloadResponse']> {
  const box = await downloadableFile(ctx, caller, projectId, boxId);
  if (!box.audio) throw conflict(`${boxId} has no waveform peaks: it is not an analysed audio file (status ${box.status}).`);
  return signDownload(ctx, box.id, 'inline', format === 'dat' ? 'peaks-dat' : 'peaks-json');
}

export interface SignedGet {
  objectId: string;
  variant: Variant | undefined;
  expires: number;
  signature: string;
  disposition: Disposition;
  range: string | undefined;
  ifNoneMatch: string | undefined;
}

export interface Delivery {
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  body?: Readable;
}

export async function fetchSignedDownload(ctx: Context, get: SignedGet): Promise<Delivery> {
  const fields = { method: 'GET' as const, path: downloadPath(get.objectId), expires: get.expires, bound: downloadBinding(get.disposition, get.variant) };
  if (!ctx.signer.verify(fields, get.signature)) throw signatureRefused('The download URL was altered: its signature does not match. Use the URL exactly as it was returned.');
  if (ctx.clock.now() > get.expires) throw signatureRefused(`The download URL expired at ${new Date(get.expires).toISOString()}. Ask for a new one.`);

  const object = await findObject(ctx, get.objectId, get.variant);
  const stored = object && (await ctx.blobs.stat(object.key));
  if (!object || !stored) throw notFound('The file of this download URL no longer exists.');
  const size = stored.size;
  // The bytes under a key never change (an upload URL works once), so the
  // object id and size make a strong validator.
  const etag = `"${get.objectId}${get.variant ? '-' + get.variant : ''}-${size}"`;
  const headers: Record<string, string> = {
    'Content-Type': object.contentType,
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Content-Disposition': contentDisposition(get.disposition, object.name),
    'Cache-Control': 'private, max-age=3600',
  };
  if (get.ifNoneMatch && get.ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    return { status: 304, headers: { ETag: etag } };
  }
  const range = get.range === undefined ? undefined : parseRange(get.range, size);
  if (range === 'unsatisfiable') {
    // RFC 9110 section 15.5.17: a 416 "SHOULD generate a Content-Range header field ... bytes */<complete-length>".
    throw new HttpProblem(416, 'range-not-satisfiable', `The range ${get.range} does not overlap this ${size}-byte file.`, {
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

async function findObject(ctx: Context, objectId: string, variant: Variant | undefined): Promise<{ key: string; contentType: string; name: string } | undefined> {
  if (objectId.startsWith('art_')) {
    if (variant) return undefined;
    const artwork = await ctx.store.projects.getArtwork(objectId);
    return artwork && { key: artworkBlobKey(artwork.projectId, artwork.id), contentType: artwork.contentType, name: `artwork.${artwork.contentType.split('/')[1]}` };
  }
  const box = await ctx.store.boxes.findFile(objectId);
  if (!box || box.status === 'awaiting-upload') return undefined;
  if (variant) {
    const { contentType, extension } = VARIANTS[variant];
    return { key: renditionBlobKey(box.projectId, objectId, variant), contentType, name: box.name.replace(/\.[^.]*$/, '') + extension };
  }
  return { key: fileBlobKey(box.projectId, objectId), contentType: box.mimeType!, name: box.name };
}

/**
 * One byte range of RFC 9110 section 14.1.2: `bytes=a-b`, `bytes=a-` or the
 * suffix `bytes=-n`. A header this does not understand, or several ranges,
 * is ignored and the whole file is sent, which section 14.2 allows ("A server
 * MAY ignore the Range header field").
 */
export function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** RFC 6266: an ASCII fallback in `filename`, and the exact name in `filename*` (RFC 8187) when it is not plain ASCII. */
export function contentDisposition(disposition: Disposition, name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const header = `${disposition}; filename="${fallback}"`;
  if (fallback === name) return header;
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${header}; filename*=UTF-8''${encoded}`;
}
