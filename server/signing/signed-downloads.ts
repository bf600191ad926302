/**
 * Signed download URLs: for a file box's bytes, or an artwork image. The
 * signature binds the object, the expiry and the disposition, so a URL made
 * for inline streaming cannot be turned into an attachment, or the reverse.
 * An `inline` URL only asks: the endpoint serves inline only what is on its
 * allow-list (download-rules.ts), so signing inline is safe for any object.
 */
import type { Clock } from '../lib/clock.ts';
import type { Config } from '../config.ts';
import { apiRoot } from '../lib/api-root.ts';
import type { UrlSigner } from './url-signer.ts';
import type { Variant } from '../blobs/keys.ts';
import { grantQuery, type PlayerGrant } from './player-grant.ts';

/** The ports this service uses, and nothing more. */
type Ports = { clock: Clock; config: Pick<Config, 'downloadUrlTtlMs' | 'publicUrl'>; signer: UrlSigner };

export type { Variant };

export type Disposition = 'attachment' | 'inline';

export function downloadPath(objectId: string) {
  return `/download/${objectId}`;
}

/** `grant`: a URL minted for a listener's view of a player, refused once the player no longer allows it (player-grants.ts). */
export function signDownload(ctx: Ports, objectId: string, disposition: Disposition = 'attachment', variant?: Variant, grant?: PlayerGrant): { url: string; expires: number } {
  const expires = ctx.clock.now() + ctx.config.downloadUrlTtlMs;
  return { url: downloadSigner(ctx, { disposition, variant, grant, expires })(objectId), expires };
}

/**
 * The signed download URLs of many objects that share disposition, variant,
 * grant and expiry: what they share (the signed string after the path, the
 * query around the signature) is made once, and each URL costs one HMAC.
 */
export function downloadSigner(
  ctx: Omit<Ports, 'clock'>,
  { disposition, variant, grant, expires }: { disposition: Disposition; variant?: Variant; grant?: PlayerGrant; expires: number },
): (objectId: string) => string {
  const sign = ctx.signer.signerOfPaths({ method: 'GET', expires, bound: downloadBinding(disposition, variant, grant) });
  const query = new URLSearchParams(grant ? grantQuery(grant) : {});
  if (variant) query.set('variant', variant);
  query.set('expires', String(expires));
  const root = apiRoot(ctx.config);
  // The signature is hex, with nothing to escape; the disposition follows it.
  const beforeSignature = `?${query}&signature=`;
  const afterSignature = disposition === 'inline' ? '&disposition=inline' : '';
  return (objectId) => {
    const path = downloadPath(objectId);
    return `${root}${path}${beforeSignature}${sign(path)}${afterSignature}`;
  };
}

/** The values a download signature binds besides path and expiry. */
export const downloadBinding = (disposition: Disposition, variant: Variant | undefined, grant?: PlayerGrant) => ({
  disposition,
  variant: variant ?? 'original',
  ...(grant ? grantQuery(grant) : {}),
});

/**
 * What each variant is, as stored and sent. We make these ourselves (ffmpeg
 * writes the renditions, the waveform builder the peaks), so their types are
 * known rather than sniffed. `inline` puts a variant on the inline allow-list
 * (download-rules.ts): the renditions are audio, and the JSON peaks are our
 * own JSON. The binary peaks are served as an opaque attachment.
 */
export const VARIANTS: Record<Variant, { contentType: string; extension: string; inline: boolean }> = {
  compressed: { contentType: 'audio/mp4', extension: '.m4a', inline: true },
  lossless: { contentType: 'audio/flac', extension: '.flac', inline: true },
  'peaks-json': { contentType: 'application/json', extension: '.peaks.json', inline: true },
  'peaks-dat': { contentType: 'application/octet-stream', extension: '.peaks.dat', inline: false },
};
