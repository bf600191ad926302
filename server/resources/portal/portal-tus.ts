/**
 * The upload portal's resumable uploads: tus 1.0.0 (https://tus.io/protocols/resumable-upload)
 * through @tus/server, under /api/v1/portal/{playerid}/tus. Mounted before
 * the API's bearer authentication and request validator: a portal's
 * uploader has no token, and PATCH bodies (application/offset+octet-stream)
 * must stream to disk unparsed.
 *
 * Each request is checked here before tus sees it, with the answers of the
 * rest of the API (RFC 9457 problems): the portal must be open, an upload
 * must be this portal's, and creations are rate limited per client address.
 * The rules of a new upload (sizes, types, quota) run in tus's
 * onUploadCreate hook, before the upload exists and before any byte is sent;
 * its refusals are problems too (onResponseError). While a PATCH streams,
 * the portal is read again every second: closing it cuts the PATCH.
 *
 * The bytes go to DATA_DIR/portal-uploads (@tus/file-store) while they
 * arrive, and into the blob store (disk or S3) once complete.
 */
import type { IncomingMessage } from 'node:http';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { Server, type ServerOptions } from '@tus/server';
import { FileStore } from '@tus/file-store';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { apiRoot, type Context } from '../../context.ts';
import { newId } from '../../lib/ids.ts';
import { HttpProblem, notFound, unsupportedMediaType, type FieldError, type ProblemType } from '../../http/problem.ts';
import { addressKey, consumeOrRefuse } from '../../http/rate-limit.ts';
import { toProblem } from '../../http/errors.ts';
import { abandon, claimRoom, CLOSED_BEFORE_COMPLETE, createUpload, finishUpload, openPortal, portalUploadDir, removePartialBytes, requireOpenUpload, settleRoom, type PortalPlayer } from './portal-service.ts';
import { EventLocker } from './portal-locker.ts';

/** How often a PATCH under way reads the portal again, so that closing it stops the PATCH within about this long. */
export const PORTAL_WATCH_MS = 1000;

export { portalUploadDir };

// The tus upload ids this server makes (newId('pup')): nothing else is taken as one, so no path can be named.
const UPLOAD_ID = /^pup_[0-9a-z]{16}$/;

export function portalRoutes(ctx: Context): Router {
  const directory = portalUploadDir(ctx.config.dataDir);
  const datastore = new FileStore({ directory });
  // tus 1.0.0: "The Tus-Extension response header MUST be a comma-separated list of the extensions supported by the Server": only those that work here. FileStore lists
  // creation-defer-length and expiration too, but every upload declares its length before a byte (its caps are checked against it), and
  // an unfinished upload is given up by the portal's own sweep (portal-sweeper.ts), not by tus's expiration.
  datastore.extensions = [...TUS_EXTENSIONS];
  // The player each request was admitted for, by its Node request (tus hands hooks a Fetch-style request wrapping it).
  const admitted = new WeakMap<IncomingMessage, PortalPlayer>();
  // The upload a creation request made, by its Node request: a creation that carries bytes has its room settled when it ends.
  const created = new WeakMap<IncomingMessage, string>();
  const locker = new EventLocker();
  /** The bytes tus has stored so far for an upload under way (0 when its file is gone). */
  const storedBytes = (uploadId: string) => stat(join(directory, uploadId)).then((file) => file.size, () => 0);
  const playerOf = (req: Parameters<NonNullable<ServerOptions['onUploadCreate']>>[0]): PortalPlayer => {
    const node = nodeOf(req)?.req;
    const player = node && admitted.get(node);
    if (!player) throw new Error('a tus request reached its hooks without being admitted');
    return player;
  };

  const tus = new PortalTusServer({
    path: '/api/v1/portal',
    datastore,
    namingFunction: () => newId('pup'),
    // A waiting request costs nothing (EventLocker), and a HEAD takes no lock at all: it only reads the upload's record and the size of
    // its file, which a PATCH under way only grows. tus 1.0.0, HEAD: "The Server MUST always include the Upload-Offset header in the
    // response for a HEAD request" — the bytes stored so far, whether or not a PATCH is still writing.
    locker: (req) => (req.method === 'HEAD' ? NO_LOCK : locker),
    // The upload's URL: under the portal's own path, at PUBLIC_URL, like every other URL the API gives out.
    generateUrl: (req, { id }) => `${apiRoot(ctx.config)}/portal/${encodeURIComponent(playerOf(req).id)}/tus/${id}`,
    getFileIdFromRequest: (_req, last) => (last && UPLOAD_ID.test(last) ? last : undefined),
    // No CORS (http/cors.ts says why): tus answers Access-Control-Allow-Origin: * unless told which origins to allow; none are.
    allowedOrigins: () => false,
    async onUploadCreate(req, upload) {
      const node = nodeOf(req)?.req;
      const bodyBytes = node && carriesBytes(node) ? announcedBytes(node, upload.size ?? 0) : 0;
      await createUpload(ctx, playerOf(req), { uploadId: upload.id, size: upload.size, metadata: upload.metadata ?? {}, bodyBytes });
      if (node) created.set(node, upload.id);
      return {};
    },
    async onUploadFinish(req, upload) {
      const player = playerOf(req);
      try {
        await finishUpload(ctx, player.id, upload.id, join(directory, upload.id));
      } finally {
        // The bytes were moved into the blob store, or refused: either way tus's copy and its record go.
        await datastore.remove(upload.id).catch(() => datastore.configstore.delete(upload.id));
      }
      return {};
    },
    onResponseError(req, error) {
      // Every refusal is a problem (RFC 9457), tus's own ones too (409 on an Upload-Offset that is not the server's…), with tus's status.
      let problem: HttpProblem;
      if (error instanceof HttpProblem) problem = error;
      else if ('status_code' in error && error.status_code < 500) problem = new HttpProblem(TUS_PROBLEM_TYPES[error.status_code] ?? 'validation-error', error.body.trim());
      else {
        ctx.logger.error('a portal upload failed', { err: error });
        problem = new HttpProblem('internal-error', 'The upload could not be stored. Try again later; the bytes received so far are kept.');
      }
      const node = nodeOf(req);
      for (const [name, value] of Object.entries(problem.extra.headers ?? {})) node?.res.setHeader(name, value);
      // The request id, as every other problem of the API gives it.
      return { status_code: problem.status, body: JSON.stringify(problem.body(String(node?.req.id))) };
    },
  });

  const limiter: RateLimiterAbstract | undefined =
    ctx.config.portal.uploadsPerHour > 0 ? ctx.store.db.rateLimiter({ keyPrefix: 'portal', points: ctx.config.portal.uploadsPerHour, durationSeconds: 3600 }) : undefined;

  /**
   * Once a request that sent bytes ends: an upload given up meanwhile, or
   * whose portal is now closed, loses what this request wrote; an
   * unfinished one takes the room of the bytes stored.
   */
  const settle = async (uploadId: string) => {
    const upload = await ctx.store.portal.get(uploadId);
    if (upload && upload.timeCompleted !== null) return;
    // A creation whose upload was recorded as its portal closed escaped releasePortal's listing: it is given up here.
    const closed = await openPortal(ctx, upload?.playerId ?? '').then(() => false, (error: unknown) => error instanceof HttpProblem && error.status === 404);
    if (upload && closed) await abandon(ctx, upload, CLOSED_BEFORE_COMPLETE);
    if (!upload || closed) {
      await datastore.remove(uploadId).catch(() => removePartialBytes(ctx, uploadId));
      return;
    }
    await settleRoom(ctx, uploadId, await storedBytes(uploadId));
  };

  const handle = async (req: Request<{ playerid: string; uploadid?: string }>, res: Response, next: NextFunction) => {
    let watch: NodeJS.Timeout | undefined;
    const sendsBytes = req.method === 'PATCH' || (req.method === 'POST' && carriesBytes(req));
    try {
      checkPathIds(req);
      checkQuery(req);
      checkTusHeaders(req);
      const player = await openPortal(ctx, req.params.playerid).catch((error: unknown) => {
        // The capabilities (OPTIONS) document no 410: there, the portal of an expired link is one that is not open (404).
        if (req.method === 'OPTIONS' && error instanceof HttpProblem && error.status === 410) throw notFound(`There is no open upload portal at ${req.params.playerid}: its link has expired.`);
        throw error;
      });
      const uploadId = req.params.uploadid;
      if (uploadId !== undefined) {
        const upload = await requireOpenUpload(ctx, player, uploadId);
        if (req.method === 'DELETE') {
          // tus 1.0.0, termination: "the Server SHOULD free resources"; the file box waiting for these bytes goes with them.
          await abandon(ctx, upload, 'The uploader cancelled the upload.');
        }
        if (req.method === 'PATCH') {
          // Only bytes received take room: this PATCH claims the room of the bytes it announces, and is refused (413) before a byte when
          // they would overfill the portal or the owner's quota.
          const offset = Number(req.get('upload-offset'));
          await claimRoom(ctx, player, upload, offset, announcedBytes(req, upload.size - offset));
        }
      } else if (req.method === 'POST' && limiter) {
        await consumeOrRefuse(limiter, addressKey(req.ip ?? req.socket.remoteAddress ?? 'unknown'), (retryAfter) =>
          `Too many uploads from your address: at most ${ctx.config.portal.uploadsPerHour} per hour. Retry after ${retryAfter} second(s).`,
        );
      }
      admitted.set(req, player);
      // A creation that carries the file's bytes (creation-with-upload) is cut like a PATCH.
      if (sendsBytes) {
        watch = watchPortal(ctx, player.id, req, async () => {
          const id = req.params.uploadid ?? created.get(req);
          return id === undefined ? 0 : storedBytes(id);
        });
      }
    } catch (error) {
      return next(error);
    }
    try {
      await tus.handle(req, res);
    } catch (error) {
      next(error);
    } finally {
      clearInterval(watch);
      const uploadId = req.params.uploadid ?? created.get(req);
      if (sendsBytes && uploadId) await settle(uploadId).catch((error: unknown) => ctx.logger.error('settling the room of a portal upload failed', { err: error, uploadId }));
    }
  };

  const router = Router();
  router.post('/api/v1/portal/:playerid/tus', handle);
  router.options('/api/v1/portal/:playerid/tus', handle);
  router.head('/api/v1/portal/:playerid/tus/:uploadid', handle);
  router.patch('/api/v1/portal/:playerid/tus/:uploadid', handle);
  router.delete('/api/v1/portal/:playerid/tus/:uploadid', handle);
  router.options('/api/v1/portal/:playerid/tus/:uploadid', handle);
  return router;
}

/**
 * tus's Server, whose error answers carry the problem's media type: it
 * writes every answer as a Fetch Response, which labels a string body
 * text/plain unless told otherwise, and its hooks cannot reach those headers.
 * An answer tus writes without its hooks (its own header checks, which
 * checkTusHeaders runs first so that they never refuse) becomes a problem
 * too, and no answer carries a CORS header.
 */
class PortalTusServer extends Server {
  override write(...[context, headers, status, body]: Parameters<Server['write']>) {
    if (status >= 400 && body?.startsWith('{"type":"/problems/')) headers.set('Content-Type', 'application/problem+json');
    return super.write(context, headers, status, body);
  }

  constructor(options: ConstructorParameters<typeof Server>[0]) {
    super(options);
    // Server.handler (private in its types, called by handle for every request) answers each request: wrapped, so that every answer passes
    // through asProblem.
    const self = this as unknown as { handler: (req: TusRequest) => Promise<globalThis.Response> };
    const inner = self.handler.bind(this);
    self.handler = async (req) => asProblem(req, await inner(req));
  }
}

type TusRequest = Parameters<NonNullable<ServerOptions['onResponseError']>>[0];

/** The Node request and response a tus request wraps (@tus/server hands its hooks a Fetch-style request with them under `runtime`). */
const nodeOf = (req: TusRequest) => (req as { runtime?: { node?: { req: Request; res: Response } } }).runtime?.node;

/** tus's answer without CORS headers, and as a problem (RFC 9457) when it is a refusal tus wrote as plain text. */
async function asProblem(req: TusRequest, res: globalThis.Response): Promise<globalThis.Response> {
  for (const name of [...res.headers.keys()]) if (name.startsWith('access-control-')) res.headers.delete(name);
  if (res.status < 400 || res.headers.get('content-type')?.startsWith('application/problem+json')) return res;
  const text = (await res.text()).trim();
  const problem =
    res.status < 500
      ? new HttpProblem(TUS_PROBLEM_TYPES[res.status] ?? 'validation-error', text || 'The tus request is not valid.')
      : new HttpProblem('internal-error', 'The upload could not be stored. Try again later; the bytes received so far are kept.');
  const node = nodeOf(req);
  const body = JSON.stringify(problem.body(String(node?.req.id)));
  const headers = new Headers(res.headers);
  headers.set('Content-Type', 'application/problem+json');
  headers.set('Content-Length', String(Buffer.byteLength(body)));
  return new globalThis.Response(body, { status: problem.status, headers });
}

/** tus 1.0.0 extensions this server supports, as OPTIONS tells them. */
const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'termination'] as const;

/** The locker of requests that only read: every lock is granted at once. */
const NO_LOCK = { newLock: () => ({ lock: async () => {}, unlock: async () => {} }) };

/**
 * The problem type of each status @tus/server refuses with; the status then follows the type. tus 1.0.0 lets an
 * upload that is gone be either ("the Server SHOULD respond with the 404 Not Found or 410 Gone status"): 404 here.
 */
const TUS_PROBLEM_TYPES: Record<number, ProblemType> = { 400: 'validation-error', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 410: 'not-found', 412: 'precondition-failed', 413: 'payload-too-large', 415: 'unsupported-media-type' };

/**
 * tus 1.0.0, creation-with-upload: "the Client MAY include parts of the upload in the initial Creation request … the Client MUST include
 * the Content-Type: application/offset+octet-stream header"; @tus/server writes a creation's body only then.
 */
const carriesBytes = (req: IncomingMessage) => req.headers['content-type'] === 'application/offset+octet-stream';

/** The bytes a request announces (its Content-Length), or, without one, all it may send: `most`. */
function announcedBytes(req: IncomingMessage, most: number): number {
  const length = req.headers['content-length'];
  return length !== undefined && NON_NEGATIVE_INTEGER.test(length) ? Math.min(Number(length), most) : most;
}

const TUS_VERSION = '1.0.0';
const NON_NEGATIVE_INTEGER = /^(0|[1-9][0-9]{0,15})$/;
// RFC 4648 §4, the Base64 alphabet, padded: tus 1.0.0 "the value MUST be Base64 encoded", and @tus/server takes only whole groups of 4.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The path's ids, as the spec gives them: these routes come before the
 * validator that checks every other operation's (they stream raw bytes), so
 * they check their own. A malformed id is a 400 naming it, as elsewhere.
 */
function checkPathIds(req: Request<{ playerid: string; uploadid?: string }>): void {
  const errors: FieldError[] = [];
  if (req.params.playerid.length > 64) errors.push({ parameter: 'playerid', detail: 'must be at most 64 characters' });
  if (req.params.uploadid !== undefined && !UPLOAD_ID.test(req.params.uploadid)) errors.push({ parameter: 'portaluploadid', detail: 'must be an upload id this portal gave (pup_ and 16 characters)' });
  if (errors.length > 0) throw new HttpProblem('validation-error', `The request's path is not valid: ${errors.map((error) => `${error.parameter} ${error.detail}`).join('; ')}.`, { errors });
}

/**
 * The portal's operations take no query parameter: one is refused, as the
 * API's validator refuses a parameter an operation does not define, before
 * anything is done (a DELETE with one cancels nothing).
 */
function checkQuery(req: Request): void {
  const at = req.originalUrl.indexOf('?');
  if (at < 0 || at === req.originalUrl.length - 1) return;
  const names = [...new Set(new URLSearchParams(req.originalUrl.slice(at + 1)).keys())];
  // In the shape of the validator's refusal, so that the answer is the one every other operation gives (http/errors.ts).
  const errors = (names.length > 0 ? names : ['']).map((name) => ({ path: `/query/${name}`, message: `Unknown query parameter '${name}': this operation takes none; remove it` }));
  throw toProblem({ status: 400, message: 'unknown query parameter', errors }) ?? new HttpProblem('validation-error', 'This operation takes no query parameters.');
}

/**
 * What is wrong with an Upload-Metadata value, or undefined when it is
 * well formed. tus 1.0.0, Upload-Metadata: "one or more comma-separated
 * key-value pairs. The key and value MUST be separated by a space. The key
 * MUST NOT contain spaces and commas and MUST NOT be empty. The key SHOULD
 * be ASCII encoded and the value MUST be Base64 encoded. All keys MUST be
 * unique. The value MAY be empty."
 */
export function metadataFault(value: string): string | undefined {
  const seen = new Set<string>();
  for (const raw of value.split(',')) {
    const pair = raw.trim();
    const [key, encoded, ...rest] = pair.split(' ');
    const label = JSON.stringify(pair.slice(0, 40));
    if (!key) return `has an empty pair or key (${label}): send pairs such as "filename bXkud2F2", separated by commas`;
    // ASCII keys: @tus/server refuses any other, and the keys this portal reads are ASCII words.
    if (!/^[\x21-\x7e]+$/.test(key)) return `key ${label} must be ASCII without spaces or commas`;
    if (rest.length > 0 || (encoded !== undefined && !BASE64.test(encoded))) return `the value of ${JSON.stringify(key)} must be Base64 (RFC 4648, padded with = to a multiple of 4 characters), one space after its key`;
    if (seen.has(key)) return `key ${JSON.stringify(key)} is given twice: each key once`;
    seen.add(key);
  }
  return undefined;
}

/**
 * The headers of tus 1.0.0, checked before tus sees the request, so that
 * each fault is told as a problem with every offending header listed. Every
 * header @tus/server validates by itself (on every request but OPTIONS) is
 * checked here first, so that tus never answers one with plain text.
 */
function checkTusHeaders(req: Request): void {
  if (req.method === 'OPTIONS') return;
  const resumable = req.get('tus-resumable');
  // tus 1.0.0: "If the version specified by the Client is not supported by the Server, it MUST respond with the 412 Precondition Failed
  // status and MUST include the Tus-Version header into the response."
  if (resumable !== TUS_VERSION) {
    throw new HttpProblem('precondition-failed', `Send Tus-Resumable: ${TUS_VERSION}, the version of the tus protocol this server speaks${resumable ? `; got ${resumable}` : ''}.`, {
      headers: { 'Tus-Version': TUS_VERSION },
      errors: [{ header: 'tus-resumable', detail: `must be ${TUS_VERSION}` }],
    });
  }
  if (req.method === 'PATCH') {
    // tus 1.0.0, PATCH: "All PATCH requests MUST use Content-Type: application/offset+octet-stream, otherwise the server SHOULD return a
    // 415 Unsupported Media Type status", as every operation of the API refuses a type it does not take: before the other headers.
    const type = req.get('content-type');
    if (type !== 'application/offset+octet-stream') {
      throw unsupportedMediaType(`This operation does not take ${type ? `Content-Type ${type}` : 'a body without a Content-Type'}. Send the body as application/offset+octet-stream, with a matching Content-Type header.`);
    }
  }
  const errors: FieldError[] = [];
  const length = req.get('upload-length');
  const offset = req.get('upload-offset');
  const metadata = req.get('upload-metadata');
  if (req.method === 'POST') {
    if (length === undefined || !NON_NEGATIVE_INTEGER.test(length)) errors.push({ header: 'upload-length', detail: 'must be the file\'s size in bytes' });
  } else if (length !== undefined) {
    errors.push({ header: 'upload-length', detail: 'is declared when the upload is created, and only then' });
  }
  if (req.method === 'PATCH') {
    if (offset === undefined || !NON_NEGATIVE_INTEGER.test(offset)) errors.push({ header: 'upload-offset', detail: 'must be the offset the server reported, in bytes' });
  } else if (offset !== undefined) {
    errors.push({ header: 'upload-offset', detail: 'is sent with the bytes (PATCH), and only then' });
  }
  if (metadata !== undefined) {
    const fault = req.method === 'POST' ? metadataFault(metadata) : 'is sent when the upload is created, and only then';
    if (fault) errors.push({ header: 'upload-metadata', detail: fault });
  }
  // The headers of extensions this server does not support (TUS_EXTENSIONS) are refused, rather than left to tus (a 501 there).
  if (req.get('upload-defer-length') !== undefined) errors.push({ header: 'upload-defer-length', detail: 'is not taken (creation-defer-length is not supported): declare Upload-Length' });
  if (req.get('upload-concat') !== undefined) errors.push({ header: 'upload-concat', detail: 'is not taken: send each file as one upload' });
  const proto = req.get('x-forwarded-proto');
  if (proto !== undefined && proto !== 'http' && proto !== 'https') errors.push({ header: 'x-forwarded-proto', detail: 'must be http or https' });
  const version = req.get('tus-version');
  if (version !== undefined && version !== TUS_VERSION) errors.push({ header: 'tus-version', detail: `is a response header; if sent, it must be ${TUS_VERSION}` });
  if (errors.length > 0) throw new HttpProblem('validation-error', `The tus request is not valid: ${errors.map((error) => `${error.header} ${error.detail}`).join('; ')}.`, { errors });
}

/**
 * Reads the portal every PORTAL_WATCH_MS while a request streams bytes (a
 * PATCH, or a creation that carries them), and cuts it once the portal is
 * closed or its link expires: the uploader's next request (their client's
 * retry) is refused; a closed portal has given up its unfinished uploads
 * (releasePortal), and the bytes the request wrote go when it ends. A
 * database that does not answer cuts nothing.
 *
 * It also cuts a request to which no byte came for UPLOAD_CLAIM_SECONDS, as
 * a signed PUT is given up: the room its Content-Length claimed is held only
 * while bytes flow, and is settled to the bytes stored when it ends.
 */
function watchPortal(ctx: Context, playerId: string, req: Request, stored: () => Promise<number>): NodeJS.Timeout {
  let last = -1;
  let since = performance.now();
  const cut = () => {
    clearInterval(timer);
    req.destroy();
  };
  const timer = setInterval(() => {
    openPortal(ctx, playerId).catch((error: unknown) => {
      if (error instanceof HttpProblem) cut();
    });
    stored().then((size) => {
      if (size !== last) {
        last = size;
        since = performance.now();
      } else if (performance.now() - since >= ctx.config.uploadClaimMs) {
        cut();
      }
    }, () => undefined);
  }, PORTAL_WATCH_MS);
  timer.unref();
  return timer;
}
