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

export function signDownload(ctx: Context, objectId: string, disposition: Disposition = 'attachment'): { url: string; expires: number } {
  const expires = ctx.clock.now() + ctx.config.downloadUrlTtlMs;
  const path = downloadPath(objectId);
  const signature = ctx.signer.sign({ method: 'GET', path, expires, bound: { disposition } });
  const query = new URLSearchParams({ expires: String(expires), signature });
  if (disposition === 'inline') query.set('disposition', 'inline');
  return { url: `${apiRoot(ctx.config)}${path}?${query}`, expires };
}

/** The blob key of a file box's original bytes. */
export const fileBlobKey = (projectId: string, boxId: string) => `projects/${projectId}/files/${boxId}`;
/** The blob key of an artwork image. */
export const artworkBlobKey = (projectId: string, artworkId: string) => `projects/${projectId}/artwork/${artworkId}`;
