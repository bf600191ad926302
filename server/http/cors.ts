/**
 * CORS, so that browser apps on other origins can call the API and PUT to
 * the signed upload URLs. The API authenticates with bearer tokens, never
 * cookies, so any origin may call it (and credentials are not allowed).
 * Preflights are answered here, before routing and validation.
 */
import type { NextFunction, Request, Response } from 'express';

const allowedHeaders = [
  'Authorization',
  'Content-Type',
  'Range',
  'If-None-Match',
  'If-Match',
  'X-Request-Id',
  'x-storage-meta-destination',
  'x-storage-meta-projectid',
  'x-storage-meta-boxpath',
  'x-storage-meta-writeback',
  // The upload portals' tus requests (tus 1.0.0).
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Offset',
  'Upload-Metadata',
].join(', ');
const exposedHeaders = ['ETag', 'Content-Range', 'Content-Disposition', 'Content-Length', 'Accept-Ranges', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id', 'Location', 'Tus-Resumable', 'Tus-Version', 'Tus-Extension', 'Upload-Offset', 'Upload-Length'].join(', ');

export function cors(req: Request, res: Response, next: NextFunction) {
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
