/**
 * The portal's operations: tus 1.0.0 requests (their rows are `protocol:
 * 'tus'` in generated/operations.ts), served raw by portal-tus.ts. The API's
 * router calls them after matching and before its body parser and
 * validator: a portal's uploader has no credential (the rows take none), and
 * PATCH bodies stream to disk unparsed.
 */
import type { Context } from '../../context.ts';
import type { RawHandlers } from '../../http/operations.ts';
import { portalTusHandler } from './portal-tus.ts';

export function portalHandlers(ctx: Context): RawHandlers {
  const tus = portalTusHandler(ctx);
  return { createPortalUpload: tus, getPortalCapabilities: tus, getPortalUploadOffset: tus, appendPortalUpload: tus, cancelPortalUpload: tus };
}
