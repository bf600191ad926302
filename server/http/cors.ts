/**
 * CORS, so that browser apps on other origins can call the API and PUT to
 * the signed upload URLs. The API authenticates with bearer tokens, never
 * cookies, so any origin may call it (and credentials are not allowed).
 * Preflights are answered here, before routing and validation.
 *
 * Not the upload portals' tus endpoints (/api/v1/portal/…): they take
 * uploads from anyone without a credential, so a page on another site must
 * not be able to make its visitors' browsers create uploads there, each from
 * its own address. The portal's own page is on this server's origin and
 * needs no CORS. Without the header, the Fetch standard's CORS check fails
 * (for a preflight too): "Let origin be the result of getting
 * `Access-Control-Allow-Origin` from response's header list. If origin is
 * null, then return failure."
 */
import type { NextFunction, Request, Response } from 'express';

const allowedHeaders = [
  'Authorization',
  'Content-Type',
  'Range',
  'If-None-Match',
  'If-Match',
  'X-Request-Id',
  'Idempotency-Key',
  'x-storage-meta-destination',
  'x-storage-meta-projectid',
  'x-storage-meta-boxpath',
  'x-storage-meta-writeback',
  // tus 1.0.0's request headers, for project members' resumable uploads (/api/v1/projects/{projectid}/tus) from apps on other origins.
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  // MCP's Streamable HTTP transport (/mcp), for assistants that run in a browser.
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
].join(', ');
const exposedHeaders = ['ETag', 'Content-Range', 'Content-Disposition', 'Content-Length', 'Accept-Ranges', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id', 'Location',
  // tus 1.0.0's answers, and the file a resumable upload fills.
  'Tus-Resumable', 'Tus-Version', 'Tus-Extension', 'Upload-Offset', 'Upload-Length', 'Upload-File-Id',
  // Paging's next page; a replayed answer; where a client stands against the rate limits; a deprecated operation's dates.
  'Link', 'Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy', 'Deprecation', 'Sunset'].join(', ');

export function cors(req: Request, res: Response, next: NextFunction) {
  if (req.path.startsWith('/api/v1/portal/')) return next();
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', exposedHeaders);
  if (req.method === 'OPTIONS' && req.get('access-control-request-method')) {
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', allowedHeaders);
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
}
