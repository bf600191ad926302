/**
 * The source text of generated/client.ts. The operation table is filled in
 * from the spec; the rest is fixed code that builds on openapi-fetch.
 */
export interface OperationRow {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  authenticated: boolean;
  /** Whether the server knows who calls: a bearer token `required`, `optional`, or `none` taken. */
  caller: 'required' | 'optional' | 'none';
}

export function renderClient(operations: OperationRow[]): string {
  const rows = operations
    .map(
      (op) =>
        `  ${op.operationId}: { method: '${op.method}', path: '${op.path}', authenticated: ${op.authenticated}, caller: '${op.caller}', summary: ${JSON.stringify(op.summary)} },`,
    )
    .join('\n');
  return `/**
 * The typed client of the Audio Share API, on openapi-fetch
 * (https://openapi-ts.dev/openapi-fetch/), with the types of the spec.
 *
 *   const api = createApiClient({ baseUrl: 'http://localhost:8080/api/v1', token });
 *   const { data, error } = await api.POST('/projects', { body: { name: 'EP' } });
 *
 * - One error style (see ApiResult): every call resolves to
 *   \`{ data, error, response }\`, \`error\` being the server's RFC 9457
 *   problem; it throws only where fetch throws.
 * - Strict requests (see InitArgs): a property the spec does not name, in a
 *   body or params, at any depth, is a compile error.
 * - Helpers: uploadFile / uploadArtwork (both upload steps, with progress),
 *   getFileBox (a file, typed as one) and waitUntilReady (until processing
 *   is over).
 */
import createClient, { type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit, type ParseAs } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths };
export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];
export type FileBox = Schemas['FileBox'];

/** Every operation of the spec, by operationId. */
export const operations = {
${rows}
} as const;

export type OperationId = keyof typeof operations;

/**
 * What every call of this client resolves to, the helpers' included. This is
 * openapi-fetch's style, the one style of the whole client:
 *
 * - Exactly one of \`data\` and \`error\` is set. \`error\` is the RFC 9457 problem
 *   (\`application/problem+json\`) the server sent; \`response\` is the HTTP
 *   response the call ended with. Branch on \`error\`, not on a thrown error.
 * - A call throws (its promise rejects) only where fetch itself throws: the
 *   network failed, the \`signal\` you gave was aborted (with its reason, an
 *   \`AbortError\` DOMException unless you chose another), or a helper's own
 *   deadline passed (a \`TimeoutError\` DOMException, as with
 *   \`AbortSignal.timeout\`).
 * - The client makes one problem itself: \`getFileBox\` and \`waitUntilReady\`
 *   were given the id of a folder or a stack. See \`NotAFileProblem\`.
 */
export type ApiResult<T, E = Problem> = { data: T; error?: never; response: Response } | { data?: never; error: E; response: Response };

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type MediaType = \`\${string}/\${string}\`;

/** The paths of the spec that have an operation for method \`M\`. */
export type PathsWithMethod<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];

type Operation<P extends keyof paths, M extends HttpMethod> = paths[P][M] extends infer O extends Record<string | number, unknown> ? O : never;

/**
 * The arguments after the path: the init (params, body, fetch options),
 * optional when nothing in it is required. Its type depends on the path and
 * method only, not on a type parameter inferred from the init itself (as in
 * openapi-fetch's own signatures), so TypeScript checks an object literal
 * against it for excess properties: a misspelt field, at any depth, does not
 * compile, just as the server refuses it with 400.
 */
type InitArgs<P extends keyof paths, M extends HttpMethod, A extends ParseAs> =
  undefined extends MaybeOptionalInit<paths[P], M>
    ? [init?: Exclude<MaybeOptionalInit<paths[P], M>, undefined> & { parseAs?: A }]
    : [init: MaybeOptionalInit<paths[P], M> & { parseAs?: A }];

/** openapi-fetch's call for one method, with strict inits; responses are typed exactly as openapi-fetch types them. */
export type StrictMethod<M extends HttpMethod> = <P extends PathsWithMethod<M>, A extends ParseAs = 'json'>(
  url: P,
  ...init: InitArgs<P, M, A>
) => Promise<FetchResponse<Operation<P, M>, { parseAs: A }, MediaType>>;

/** openapi-fetch's \`request(method, url, init)\`, with strict inits. */
export type StrictRequest = <M extends HttpMethod, P extends PathsWithMethod<M>, A extends ParseAs = 'json'>(
  method: M,
  url: P,
  ...init: InitArgs<P, M, A>
) => Promise<FetchResponse<Operation<P, M>, { parseAs: A }, MediaType>>;

export interface ApiClientOptions extends ClientOptions {
  /** The API root, for example \`http://localhost:8080/api/v1\`. */
  baseUrl: string;
  /** A bearer token; sent as \`Authorization: Bearer <token>\` on API calls, never on the upload PUT. */
  token?: string;
}

/** What the upload helpers accept as the bytes to send. */
export type UploadBody = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** The bodies whose size the helpers read from the body itself. */
type SizedBody = Uint8Array | ArrayBuffer | Blob;

export interface UploadFileRequest {
  name: string;
  mimeType: string;
  /** The size in bytes: taken from the body for bytes and Blobs, required for streams. */
  size?: number;
  /** A folder or stack of the project to upload into. */
  parentid?: string;
}

export type UploadArtworkRequest = Omit<UploadFileRequest, 'parentid'>;

/** A request \`R\` for a body \`B\`: a stream has no size of its own, so \`size\` is required with one. */
export type WithSizeFor<R extends { size?: number }, B extends UploadBody> = [B] extends [SizedBody] ? R : R & { size: number };

export interface UploadOptions {
  /** Aborts either step; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Upload progress: called with the bytes sent so far and the total, as the
   * transport pulls them from the body (64 KiB at a time), and a last time
   * with \`sentBytes === totalBytes\` once the server has stored the upload;
   * only then. The counts never go down. They count what fetch has taken
   * from the body, which runs ahead of the network by the socket's buffers.
   *
   * Counting needs a streamed request body (fetch's \`duplex: 'half'\`).
   * Node.js (18+) and Deno stream request bodies over HTTP/1.1 too; other
   * runtimes are feature-detected. Browsers do not reliably: Chromium streams them only over HTTP/2 or
   * HTTP/3 and refuses them over HTTP/1.1, Firefox and Safari not at all, and
   * a page cannot know beforehand which protocol the upload URL will use. So
   * in a browser (a page or a worker) the helper sends bytes and Blobs whole,
   * and \`onProgress\` gets only its last call. For a progress bar in a
   * browser, PUT \`upload.url\` with \`upload.headers\` (from
   * \`POST /projects/{projectid}/files\`) through XMLHttpRequest and its
   * \`upload.onprogress\`. A ReadableStream or async iterable body is always
   * streamed, and so counted, where the runtime can send it at all.
   */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

/** What \`uploadFile\` resolves to: the upload URL response (with \`stackid\`, \`metadata.projectid\`) and the stored file. */
export interface UploadedFile {
  upload: Schemas['UploadUrlResponse'];
  box: FileBox;
}

/** What \`uploadArtwork\` resolves to: the upload URL response and the project, now with its artwork. */
export interface UploadedArtwork {
  upload: Schemas['ArtworkUploadUrlResponse'];
  project: Schemas['Project'];
}

/**
 * A file to read or wait on: its project and id, or what \`uploadFile\`
 * resolved to. A FileBox alone is not enough: it does not carry its project's
 * id, which the path of every file operation needs.
 */
export type FileRef = { projectid: string; fileid: string } | { upload: { metadata: { projectid: string } }; box: { id: string } };

/** A file whose processing is over: \`ready\`, or \`failed\` with \`statusReason\`. */
export type SettledFileBox = FileBox & { status: 'ready' | 'failed' };

export interface WaitOptions {
  /**
   * How long to wait in all, in milliseconds; 300000 (5 minutes) by default.
   * When it passes, the call rejects with a \`TimeoutError\` DOMException, as
   * \`AbortSignal.timeout\` does. \`Infinity\` waits until the file settles or
   * \`signal\` aborts.
   */
  timeoutMs?: number;
  /** Aborts the wait; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds between two reads of the file; 1000 by default. */
  intervalMs?: number;
}

/** The \`type\` of the problem the client makes itself when a file helper is given a folder or stack. */
export const notAFileProblemType = 'urn:audio-share:client:not-a-file';

/**
 * The problem \`getFileBox\` and \`waitUntilReady\` resolve with when the id is a
 * folder or a stack. No server sends it (its \`type\` is a URN, not one of the
 * server's \`/problems/…\`): the server answered 200 with the box, which is in
 * \`box\`, and \`response\` is that answer. \`status\` is 404, as for an id that
 * names no file; \`detail\` says what the box is and what to call instead.
 */
export type NotAFileProblem = Problem & {
  type: typeof notAFileProblemType;
  status: 404;
  box: Schemas['FolderBox'] | Schemas['StackBox'];
};

/**
 * A client for the API: openapi-fetch's \`GET\`/\`POST\`/\`PUT\`/\`DELETE\` with the
 * spec's types, plus helpers for what every integrator writes by hand.
 *
 * Every call resolves to \`{ data, error, response }\` and throws only where
 * fetch throws; see \`ApiResult\`. Request bodies, params and options are
 * checked strictly: a property the spec does not name, at any depth, is a
 * compile error.
 */
export type ApiClient = Pick<Client<paths>, 'use' | 'eject'> & {
  request: StrictRequest;
  /** Call a GET operation. */
  GET: StrictMethod<'get'>;
  /** Call a PUT operation. */
  PUT: StrictMethod<'put'>;
  /** Call a POST operation. */
  POST: StrictMethod<'post'>;
  /** Call a DELETE operation. */
  DELETE: StrictMethod<'delete'>;
  /** Call an OPTIONS operation. */
  OPTIONS: StrictMethod<'options'>;
  /** Call a HEAD operation. */
  HEAD: StrictMethod<'head'>;
  /** Call a PATCH operation. */
  PATCH: StrictMethod<'patch'>;
  /** Call a TRACE operation. */
  TRACE: StrictMethod<'trace'>;

  /**
   * Uploads a file in the two steps of the API: requests a signed upload URL
   * (\`POST /projects/{projectid}/files\`), then PUTs the bytes to it with
   * exactly the \`headers\` it names, and no bearer token.
   *
   * Resolves to \`data: { upload, box }\`, the stored file being \`box\`
   * (\`pending\` while audio waits for analysis; see \`waitUntilReady\`), or to
   * the \`error\` of whichever step failed, with that step's \`response\`.
   */
  uploadFile<B extends UploadBody>(projectid: string, file: WithSizeFor<UploadFileRequest, B>, body: B, options?: UploadOptions): Promise<ApiResult<UploadedFile>>;

  /**
   * Uploads a project's artwork in the same two steps
   * (\`POST /projects/{projectid}/artwork\`, then the PUT). Resolves to
   * \`data: { upload, project }\`, the project now with its artwork, or to the
   * \`error\` of whichever step failed.
   */
  uploadArtwork<B extends UploadBody>(
    projectid: string,
    image: WithSizeFor<UploadArtworkRequest, B>,
    body: B,
    options?: UploadOptions,
  ): Promise<ApiResult<UploadedArtwork>>;

  /**
   * Reads a file: \`GET /projects/{projectid}/files/{fileid}\`, with \`data\`
   * typed as a FileBox (the operation itself answers any box: file, folder
   * or stack). When the id is a folder or a stack, resolves to a
   * \`NotAFileProblem\` error that says so.
   */
  getFileBox(file: FileRef, init?: { signal?: AbortSignal }): Promise<ApiResult<FileBox, Problem | NotAFileProblem>>;

  /**
   * Reads the file every \`intervalMs\` until its processing is over: until it
   * leaves \`awaiting-upload\`, \`pending\` and \`processing\` for \`ready\` or
   * \`failed\`. Resolves to that file as \`data\` (check \`data.status\`: a failed
   * file is an answer, not an error, with its \`statusReason\`), or to the
   * first \`error\` a read gets (a 429 is waited out and read again, after its
   * Retry-After). Rejects with a \`TimeoutError\` DOMException when \`timeoutMs\`
   * passes first, and with the signal's reason when \`signal\` aborts.
   */
  waitUntilReady(file: FileRef, options?: WaitOptions): Promise<ApiResult<SettledFileBox, Problem | NotAFileProblem>>;
};

export function createApiClient({ token, headers, ...options }: ApiClientOptions): ApiClient {
  const client = createClient<paths>({
    ...options,
    headers: { ...(token ? { Authorization: \`Bearer \${token}\` } : {}), ...(headers as Record<string, string> | undefined) },
  });
  const fetchImpl = options.fetch ?? globalThis.fetch;

  /** The upload PUT: exactly the headers the upload URL response gives, no bearer token. */
  async function put<T>(
    upload: { url: string; headers: Record<string, string> },
    body: UploadBody,
    total: number,
    { signal, onProgress }: UploadOptions = {},
  ): Promise<ApiResult<T>> {
    const response = await fetchImpl(
      new Request(upload.url, {
        method: 'PUT',
        headers: upload.headers,
        body: requestBody(body, total, onProgress),
        signal,
        // A streamed request body must be sent half-duplex (the Fetch standard's
        // RequestInit.duplex, "half" being its only value); fetch refuses one without it.
        ...({ duplex: 'half' } as object),
      }),
    );
    if (!response.ok) return { error: asProblem(await bodyOf(response), response), response };
    const data = (await response.json()) as T;
    onProgress?.(total, total);
    return { data, response };
  }

  async function getFileBox(file: FileRef, init: { signal?: AbortSignal } = {}): Promise<ApiResult<FileBox, Problem | NotAFileProblem>> {
    const { projectid, fileid } = refOf(file);
    const { data, error, response } = await client.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } }, signal: init.signal });
    if (!response.ok || data === undefined) return { error: asProblem(error, response), response };
    if (data.object !== 'file') return { error: notAFile(projectid, data), response };
    return { data, response };
  }

  const helpers: Pick<ApiClient, 'uploadFile' | 'uploadArtwork' | 'getFileBox' | 'waitUntilReady'> = {
    async uploadFile(projectid, file, body, upload) {
      const size = sizeOf(body, file.size);
      const { data, error, response } = await client.POST('/projects/{projectid}/files', {
        params: { path: { projectid } },
        body: { name: file.name, mimeType: file.mimeType, size, ...(file.parentid ? { parentid: file.parentid } : {}) },
        signal: upload?.signal,
      });
      if (!response.ok || data === undefined) return { error: asProblem(error, response), response };
      const stored = await put<FileBox>(data, body, size, upload);
      return stored.error ? stored : { data: { upload: data, box: stored.data }, response: stored.response };
    },

    async uploadArtwork(projectid, image, body, upload) {
      const size = sizeOf(body, image.size);
      const { data, error, response } = await client.POST('/projects/{projectid}/artwork', {
        params: { path: { projectid } },
        body: { name: image.name, mimeType: image.mimeType, size },
        signal: upload?.signal,
      });
      if (!response.ok || data === undefined) return { error: asProblem(error, response), response };
      const stored = await put<Schemas['Project']>(data, body, size, upload);
      return stored.error ? stored : { data: { upload: data, project: stored.data }, response: stored.response };
    },

    getFileBox,

    async waitUntilReady(file, { timeoutMs = 300_000, signal, intervalMs = 1000 } = {}) {
      const deadline = withDeadline(signal, timeoutMs);
      try {
        for (;;) {
          const read = await getFileBox(file, { signal: deadline.signal });
          if (read.error) {
            if (read.response.status !== 429) return read;
            // Rate limited: not an answer about the file. Wait as the server asks, then read again.
            await pause(retryAfterMs(read.response) ?? intervalMs, deadline.signal);
            continue;
          }
          if (read.data.status === 'ready' || read.data.status === 'failed') return { data: read.data as SettledFileBox, response: read.response };
          await pause(intervalMs, deadline.signal);
        }
      } finally {
        deadline.dispose();
      }
    },
  };

  // The same openapi-fetch client, typed with strict inits (ApiClient); the
  // functions are openapi-fetch's own, only their parameter types are narrower.
  return Object.assign(client, helpers) as unknown as ApiClient;
}

/**
 * The headers of an upload PUT, from the upload URL response: Content-Type
 * and one x-storage-meta-<key> header for each key of metadata. The response's
 * \`headers\` field already holds exactly these; this is for code that builds
 * the PUT from \`contentType\` and \`metadata\` itself.
 */
export function uploadHeaders(upload: { contentType: string; metadata: Record<string, string> }): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': upload.contentType };
  // The interface on the files and upload operations: "The metadata headers use the prefix x-storage-meta-".
  for (const [key, value] of Object.entries(upload.metadata)) headers[\`x-storage-meta-\${key}\`] = value;
  return headers;
}

function refOf(file: FileRef): { projectid: string; fileid: string } {
  return 'fileid' in file ? file : { projectid: file.upload.metadata.projectid, fileid: file.box.id };
}

function notAFile(projectid: string, box: Schemas['FolderBox'] | Schemas['StackBox']): NotAFileProblem {
  const read = \`GET /projects/\${projectid}/files/\${box.id}\`;
  const newest = box.object === 'stack' ? box.children.at(-1) : undefined;
  const detail =
    box.object === 'stack'
      ? \`\${box.id} is a stack (the versions of one track), not a file. Pass the id of one of its versions, its children\` +
        (newest ? \` (the newest is last: \${newest.id})\` : '') +
        \`, or read the stack itself with \${read}.\`
      : \`\${box.id} is a folder, not a file. Pass the id of a file among its children, or read the folder itself with \${read}.\`;
  return { type: notAFileProblemType, title: 'Not a file', status: 404, detail, box };
}

/** The body of a failed answer, as openapi-fetch reads it: JSON when it parses, else its text. */
async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The problem of a failed answer; a body that is not one (from a proxy, say) becomes an about:blank problem. */
function asProblem(body: unknown, response: Response): Problem {
  if (typeof body === 'object' && body !== null && 'type' in body && 'title' in body && 'status' in body) return body as Problem;
  return {
    type: 'about:blank',
    // RFC 9457, 4.2.1: with "about:blank", "the title SHOULD be the same as the
    // recommended HTTP status phrase for that code".
    title: response.statusText || \`HTTP \${response.status}\`,
    status: response.status,
    detail: typeof body === 'string' && body.trim() !== '' ? body.slice(0, 1000) : \`The server answered \${response.status} without a problem document.\`,
  };
}

/** The wait a 429 asks for, in ms. RFC 9110, 10.2.3: "Retry-After = HTTP-date / delay-seconds". */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A signal that aborts with the caller's reason, or with a TimeoutError after \`timeoutMs\`. */
function withDeadline(outer: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => controller.abort(new DOMException(\`The file did not finish processing within \${timeoutMs} ms.\`, 'TimeoutError')), timeoutMs)
    : undefined;
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', forward);
    },
  };
}

/** Waits \`ms\`, or rejects with the signal's reason as soon as it aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function isSized(body: UploadBody): body is SizedBody {
  return body instanceof Uint8Array || body instanceof ArrayBuffer || (typeof Blob !== 'undefined' && body instanceof Blob);
}

function sizeOf(body: UploadBody, declared: number | undefined): number {
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  // Like fetch given a body it cannot send, a TypeError: the call is wrong, not the server's answer.
  if (declared === undefined) throw new TypeError('Give the size in bytes when uploading from a stream.');
  return declared;
}

/** The bytes to send in at most 64 KiB, so that progress moves on large bodies. */
const progressChunk = 64 * 1024;

function requestBody(body: UploadBody, total: number, onProgress: UploadOptions['onProgress']): BodyInit {
  if (isSized(body) && (!onProgress || !streamsRequestBodies())) return body as BodyInit;
  let sent = 0;
  const chunks = chunksOf(body);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) return controller.close();
        controller.enqueue(value);
        sent += value.byteLength;
        // sent === total is reported once the server has stored the bytes, not when the last one left.
        if (sent < total) onProgress?.(sent, total);
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    // Pull only when the transport reads: the count follows what fetch takes, not what a queue holds.
    { highWaterMark: 0 },
  );
}

async function* chunksOf(body: UploadBody): AsyncGenerator<Uint8Array, void, undefined> {
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
    yield* split(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
  } else if (typeof Blob !== 'undefined' && body instanceof Blob) {
    for (let start = 0; start < body.size; start += progressChunk) yield new Uint8Array(await body.slice(start, start + progressChunk).arrayBuffer());
  } else if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) {
    // A reader rather than for-await: not every browser makes streams async iterable.
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    let finished = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        yield* split(value);
      }
      finished = true;
    } finally {
      // Stopped early (the PUT was aborted or failed): tell the source.
      if (!finished) await reader.cancel();
      reader.releaseLock();
    }
  } else {
    // An async iterable; a Node.js Readable is one. Returning early closes it.
    for await (const chunk of body as AsyncIterable<Uint8Array>) yield* split(chunk);
  }
}

function* split(bytes: Uint8Array): Generator<Uint8Array> {
  for (let start = 0; start < bytes.byteLength; start += progressChunk) yield bytes.subarray(start, start + progressChunk);
}

let streamingSupport: boolean | undefined;

/**
 * Whether this runtime sends a ReadableStream as a request body. Browsers are
 * left out even when they can: Chromium can only over HTTP/2 or later, which
 * a page cannot know in advance (see UploadOptions.onProgress). Elsewhere,
 * feature detection: a runtime that supports streamed bodies reads the
 * \`duplex\` option, and does not turn the stream into a text/plain string.
 */
function streamsRequestBodies(): boolean {
  if (streamingSupport !== undefined) return streamingSupport;
  const scope = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  if (scope.document !== undefined || scope.WorkerGlobalScope !== undefined) return (streamingSupport = false);
  try {
    let duplexRead = false;
    const probe = new Request('http://localhost/', {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return 'half';
      },
    } as RequestInit);
    return (streamingSupport = duplexRead && !probe.headers.has('Content-Type'));
  } catch {
    return (streamingSupport = false);
  }
}
`;
}
