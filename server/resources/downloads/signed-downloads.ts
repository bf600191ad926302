/**
 * Signed download URLs: for a file box's bytes, or an artwork image. The
 * signature binds the object, the expiry and the disposition, so a URL made
 * for inline streaming cannot be turned into an attachment, or the reverse.
 */
import { apiRoot, type Context } from '../../context.ts';

export type Disposition = 'attachment' | 'inline';

export function downloadPath(objectId: string) {
  return `/download/${objectId}`;
}

export function signDownload(ctx: Context, objectId: string, disposition: Disposition = 'attachment', variant?: Variant): { url: string; expires: number } {
  const expires = ctx.clock.now() + ctx.config.downloadUrlTtlMs;
  const path = downloadPath(objectId);
  const signature = ctx.signer.sign({ method: 'GET', path, expires, bound: downloadBinding(disposition, variant) });
  const query = new URLSearchParams();
  if (variant) query.set('variant', variant);
  query.set('expires', String(expires));
  query.set('signature', signature);
  if (disposition === 'inline') query.set('disposition', 'inline');
  return { url: `${apiRoot(ctx.config)}${path}?${query}`, expires };
}

/** The values a download signature binds besides path and expiry. */
export const downloadBinding = (disposition: Disposition, variant: Variant | undefined) => ({ disposition, variant: variant ?? 'original' });

import type { Variant } from '../../blobs/keys.ts';
export type { Variant };

/** What each variant is, as stored and sent. */
export const VARIANTS: Record<Variant, { contentType: string; extension: string }> = {
  compressed: { contentType: 'audio/mp4', extension: '.m4a' },
  lossless: { contentType: 'audio/flac', extension: '.flac' },
  'peaks-json': { contentType: 'application/json', extension: '.peaks.json' },
  'peaks-dat': { contentType: 'application/octet-stream', extension: '.peaks.dat' },
};
