/**
 * Project members' resumable uploads: tus 1.0.0 requests (their rows are
 * `protocol: 'tus'` in generated/operations.ts), served raw by
 * project-uploads-tus.ts. The API's router calls them after matching and
 * authentication (a token with projects:write, or the session) and before
 * its body parser and validator: PATCH bodies stream to disk unparsed.
 */
import type { Context } from '../../context.ts';
import type { RawHandlers } from '../../http/operations.ts';
import { projectUploadTusHandler } from './project-uploads-tus.ts';

export function projectUploadsHandlers(ctx: Context): RawHandlers {
  const tus = projectUploadTusHandler(ctx);
  return { createProjectUpload: tus, getProjectUploadCapabilities: tus, getProjectUploadOffset: tus, appendProjectUpload: tus, cancelProjectUpload: tus };
}
