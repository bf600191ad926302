/**
 * Resumable uploads over tus 1.0.0 (https://tus.io/protocols/resumable-upload)
 * through @tus/server, shared by the two resources that take them: players'
 * upload portals (resources/portal, for strangers) and project members'
 * uploads (resources/project-uploads). Each says who may upload and what an
 * upload is (a TusResource); this module carries the protocol, the same for
 * both:
 *
 * - every request is checked here before tus sees it, with the answers of the
 *   rest of the API (RFC 9457 problems): its path ids, its query (none), its
 *   tus headers; then the resource admits it (the portal is open, the caller
 *   may write to the project…);
 * - the rules of a new upload (sizes, types, quota) run in tus's
 *   onUploadCreate hook, before the upload exists and before any byte is
 *   sent; its refusals are problems too (onResponseError);
 * - while a request streams bytes (a PATCH, or a creation that carries
 *   them), its resource is read again every second (closing a portal cuts
 *   the PATCH), and a request to which no byte comes for a while is cut;
 * - only bytes received take room: a request claims the room of the bytes it
 *   announces before a byte is taken, and when it ends the upload keeps the
 *   room of the bytes stored;
 * - a waiting request costs no CPU (EventLocker), and a HEAD takes no lock.
 *
 * The bytes go to a directory under DATA_DIR (@tus/file-store) while they
 * arrive, and into the blob store (disk or S3) once complete.
 */
import type { IncomingMessage } from 'node:http';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { Server, type ServerOptions } from '@tus/server';
import { FileStore } from '@tus/file-store';
import type { Context } from '../../context.ts';
import { newId } from '../../lib/ids.ts';
import { HttpProblem, unsupportedMediaType, type FieldError, type ProblemType } from '../../lib/problems.ts';
import { toProblem } from '../../http/errors.ts';
import { EventLocker } from './event-locker.ts';

/** How often a request that streams bytes reads its resource again, so that closing it stops the request within about this long. */
export const TUS_WATCH_MS = 1000;

export const TUS_VERSION = '1.0.0';

/** tus 1.0.0 extensions this server supports, as OPTIONS tells them. */
export const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'termination'] as const;

/** What a tus creation request declares: Upload-Length and the decoded Upload-Metadata. */
export interface NewTusUpload {
  uploadId: string;
  size: number | undefined;
  metadata: Record<string, string | null | undefined>;
  /** The bytes the creation request itself carries (tus creation-with-upload), which it claims room for; 0 without a body. */
  bodyBytes: number;
}

/** One resource's uploads: who may send them, and what each request does beyond the protocol. `Scope` is what a request is admitted for. */
export interface TusResource<Scope> {
  /** Names the uploads in logs: "a portal upload". */
  what: string;
  /** The spec's path parameters naming the scope (a player, a project) and the upload (its operations' rows, generated/operations.ts). */
  scopeParam: string;
  uploadParam: string;
  /** The prefix of the upload ids this resource makes (newId(prefix)): nothing else is taken as one, so no path can be named. */
  idPrefix: Parameters<typeof newId>[0];
  /** Where tus keeps the bytes of uploads under way. */
  directory: string;
  /** The creation URL of a scope, at PUBLIC_URL: an upload's URL is this and its id. */
  uploadUrlBase(scope: Scope): string;
  /** Admits a request to its scope, or throws the problem (404, 403…). */
  admit(req: Request): Promise<Scope>;
  /** A creation (POST) after admission, before tus reads it: a rate limit, say. */
  beforeCreate?(req: Request, scope: Scope): Promise<void>;
  /**
   * A request to an upload (HEAD, PATCH, DELETE; OPTIONS) after admission: checks
   * that the upload is the scope's and still takes bytes, gives it up on
   * DELETE, claims the room a PATCH announces. May answer the request
   * itself (a HEAD of a complete upload, say): it answers true then.
   */
  beforeUpload(req: Request, res: Response, scope: Scope, uploadId: string): Promise<boolean>;
  /** tus's onUploadCreate: every rule of a new upload, and its records. Headers it answers go on the 201. */
  create(scope: Scope, upload: NewTusUpload): Promise<Record<string, string> | undefined>;
  /** tus's onUploadFinish: the bytes at `path` are complete; take them. Headers it answers go on the last PATCH's answer. tus's copy is removed after. */
  finish(scope: Scope, uploadId: string, path: string): Promise<Record<string, string> | undefined>;
  /**
   * Once a request that sent bytes ends: answers 'remove' when the upload
   * was given up meanwhile (its bytes go), else settles its room to the
   * bytes stored.
   */
  settle(uploadId: string, stored: () => Promise<number>): Promise<'remove' | undefined>;
  /** Read every TUS_WATCH_MS while a request streams bytes: false (or a problem) cuts the request. */
  stillOpen(scope: Scope): Promise<boolean>;
}

/** Removes what tus keeps of an upload under `directory`: its partial bytes and its record of them (`<id>.json`). */
export async function removeTusBytes(directory: string, uploadId: string): Promise<void> {
  const path = join(directory, uploadId);
  await Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]);
}

/**
 * The handler of one resource's tus operations (their rows in generated/operations.ts are `protocol: 'tus'`): the API's
 * router matched the request to one of them, and set its path parameters, before calling it.
 */
export function tusHandler<Scope>(ctx: Context, resource: TusResource<Scope>) {
  const { directory } = resource;
  const datastore = new FileStore({ directory });
  // tus 1.0.0: "The Tus-Extension response header MUST be a comma-separated list of the extensions supported by the Server": only those that work here. FileStore lists
  // creation-defer-length and expiration too, but every upload declares its length before a byte (its caps are checked against it), and
  // an unfinished upload is given up by its resource's own sweep, not by tus's expiration.
  datastore.extensions = [...TUS_EXTENSIONS];
  const uploadId = new RegExp(`^${resource.idPrefix}_[0-9a-z]{16}$`);
  // The scope each request was admitted for, by its Node request (tus hands hooks a Fetch-style request wrapping it).
  const admitted = new WeakMap<IncomingMessage, Scope>();
  // The upload a creation request made, by its Node request: a creation that carries bytes has its room settled when it ends.
  const created = new WeakMap<IncomingMessage, string>();
  const locker = new EventLocker();
  /** The bytes tus has stored so far for an upload under way (0 when its file is gone). */
  const storedBytes = (id: string) => stat(join(directory, id)).then((file) => file.size, () => 0);
  const scopeOf = (req: TusRequest): Scope => {
    const node = nodeOf(req)?.req;
    if (!node || !admitted.has(node)) throw new Error('a tus request reached its hooks without being admitted');
    return admitted.get(node)!;
  };

  const tus = new ProblemTusServer({
    // Used by tus only to make URLs and find ids, both of which generateUrl and getFileIdFromRequest below do themselves.
    path: '/api/v1',
    datastore,
    namingFunction: () => newId(resource.idPrefix),
    // A waiting request costs nothing (EventLocker), and a HEAD takes no lock at all: it only reads the upload's record and the size of
    // its file, which a PATCH under way only grows. tus 1.0.0, HEAD: "The Server MUST always include the Upload-Offset header in the
    // response for a HEAD request" — the bytes stored so far, whether or not a PATCH is still writing.
    locker: (req) => (req.method === 'HEAD' ? NO_LOCK : locker),
    // The upload's URL, at PUBLIC_URL like every other URL the API gives out: under the creation URL of its scope.
    generateUrl: (req, { id }) => `${resource.uploadUrlBase(scopeOf(req))}/${id}`,
    getFileIdFromRequest: (_req, last) => (last && uploadId.test(last) ? last : undefined),
    // tus's own CORS headers are dropped (asProblem): the API's (http/cors.ts) are the ones sent, or none for the portal.
    allowedOrigins: () => false,
    async onUploadCreate(req, upload) {
      const node = nodeOf(req)?.req;
      const bodyBytes = node && carriesBytes(node) ? announcedBytes(node, upload.size ?? 0) : 0;
      const headers = await resource.create(scopeOf(req), { uploadId: upload.id, size: upload.size, metadata: upload.metadata ?? {}, bodyBytes });
      if (node) created.set(node, upload.id);
      for (const [name, value] of Object.entries(headers ?? {})) nodeOf(req)?.res.setHeader(name, value);
      return {};
    },
    async onUploadFinish(req, upload) {
      try {
        const headers = await resource.finish(scopeOf(req), upload.id, join(directory, upload.id));
        return headers ? { headers } : {};
      } finally {
        // The bytes were moved into the blob store, or refused: either way tus's copy and its record go.
        await datastore.remove(upload.id).catch(() => datastore.configstore.delete(upload.id));
      }
    },
    onResponseError(req, error) {
      // Every refusal is a problem (RFC 9457), tus's own ones too (409 on an Upload-Offset that is not the server's…), with tus's status.
      let problem: HttpProblem;
      if (error instanceof HttpProblem) problem = error;
      else if ('status_code' in error && error.status_code < 500) problem = new HttpProblem(TUS_PROBLEM_TYPES[error.status_code] ?? 'validation-error', error.body.trim());
      else {
        ctx.logger.error(`${resource.what} failed`, { err: error });
        problem = new HttpProblem('internal-error', 'The upload could not be stored. Try again later; the bytes received so far are kept.');
      }
      const node = nodeOf(req);
      for (const [name, value] of Object.entries(problem.extra.headers ?? {})) node?.res.setHeader(name, value);
      // The request id, as every other problem of the API gives it.
      return { status_code: problem.status, body: JSON.stringify(problem.body(String(node?.req.id))) };
    },
  });

  /** Once a request that sent bytes ends: its upload loses its bytes when it was given up meanwhile, else keeps the room of the bytes stored. */
  const settle = async (id: string) => {
    if ((await resource.settle(id, () => storedBytes(id))) === 'remove') await datastore.remove(id).catch(() => removeTusBytes(directory, id));
  };

  return async (req: Request<Record<string, string>>, res: Response, next: NextFunction) => {
    let watch: NodeJS.Timeout | undefined;
    const sendsBytes = req.method === 'PATCH' || (req.method === 'POST' && carriesBytes(req));
    try {
      checkPathIds(req, resource, uploadId);
      checkQuery(req);
      checkTusHeaders(req);
      const scope = await resource.admit(req);
      const id = req.params[resource.uploadParam];
      if (id !== undefined) {
        if (await resource.beforeUpload(req, res, scope, id)) return;
      } else if (req.method === 'POST') {
        await resource.beforeCreate?.(req, scope);
      }
      admitted.set(req, scope);
      // A creation that carries the file's bytes (creation-with-upload) is cut like a PATCH.
      if (sendsBytes) {
        watch = watchRequest(ctx, req, () => resource.stillOpen(scope), async () => {
          const streaming = req.params[resource.uploadParam] ?? created.get(req);
          return streaming === undefined ? 0 : storedBytes(streaming);
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
      const id = req.params[resource.uploadParam] ?? created.get(req);
      if (sendsBytes && id) await settle(id).catch((error: unknown) => ctx.logger.error(`settling the room of ${resource.what} failed`, { err: error, uploadId: id }));
    }
  };
}

/**
 * tus's Server, whose error answers carry the problem's media type: it
 * writes every answer as a Fetch Response, which labels a string body
 * text/plain unless told otherwise, and its hooks cannot reach those headers.
 * An answer tus writes without its hooks (its own header checks, which
 * checkTusHeaders runs first so that they never refuse) becomes a problem
 * too, and no answer carries a CORS header.
 */
class ProblemTusServer extends Server {
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
export const carriesBytes = (req: IncomingMessage) => req.headers['content-type'] === 'application/offset+octet-stream';

/** The bytes a request announces (its Content-Length), or, without one, all it may send: `most`. */
export function announcedBytes(req: IncomingMessage, most: number): number {
  const length = req.headers['content-length'];
  return length !== undefined && NON_NEGATIVE_INTEGER.test(length) ? Math.min(Number(length), most) : most;
}

const NON_NEGATIVE_INTEGER = /^(0|[1-9][0-9]{0,15})$/;
// RFC 4648 §4, the Base64 alphabet, padded: tus 1.0.0 "the value MUST be Base64 encoded", and @tus/server takes only whole groups of 4.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The path's ids, as the spec gives them: these routes come before the
 * validator that checks every other operation's (they stream raw bytes), so
 * they check their own. A malformed id is a 400 naming it, as elsewhere.
 */
function checkPathIds(req: Request<Record<string, string>>, resource: Pick<TusResource<unknown>, 'scopeParam' | 'uploadParam' | 'idPrefix'>, uploadId: RegExp): void {
  const errors: FieldError[] = [];
  if ((req.params[resource.scopeParam] ?? '').length > 64) errors.push({ parameter: resource.scopeParam, detail: 'must be at most 64 characters' });
  if (req.params[resource.uploadParam] !== undefined && !uploadId.test(req.params[resource.uploadParam])) {
    errors.push({ parameter: resource.uploadParam, detail: `must be an upload id this server gave (${resource.idPrefix}_ and 16 characters)` });
  }
  if (errors.length > 0) throw new HttpProblem('validation-error', `The request's path is not valid: ${errors.map((error) => `${error.parameter} ${error.detail}`).join('; ')}.`, { errors });
}

/**
 * The tus operations take no query parameter: one is refused, as the
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
    // ASCII keys: @tus/server refuses any other, and the keys read here are ASCII words.
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
 * Reads the request's resource every TUS_WATCH_MS while the request streams
 * bytes (a PATCH, or a creation that carries them), and cuts it once the
 * resource says no (a portal closed, its link expired): the uploader's next
 * request (their client's retry) is refused, and the bytes the request wrote
 * are settled when it ends. A database that does not answer cuts nothing.
 *
 * It also cuts a request to which no byte came for UPLOAD_CLAIM_SECONDS, as
 * a signed PUT is given up: the room its Content-Length claimed is held only
 * while bytes flow, and is settled to the bytes stored when it ends.
 */
function watchRequest(ctx: Context, req: Request, stillOpen: () => Promise<boolean>, stored: () => Promise<number>): NodeJS.Timeout {
  let last = -1;
  let since = performance.now();
  const cut = () => {
    clearInterval(timer);
    req.destroy();
  };
  const timer = setInterval(() => {
    stillOpen().then(
      (open) => {
        if (!open) cut();
      },
      (error: unknown) => {
        if (error instanceof HttpProblem) cut();
      },
    );
    stored().then((size) => {
      if (size !== last) {
        last = size;
        since = performance.now();
      } else if (performance.now() - since >= ctx.config.uploadClaimMs) {
        cut();
      }
    }, () => undefined);
  }, TUS_WATCH_MS);
  timer.unref();
  return timer;
}
