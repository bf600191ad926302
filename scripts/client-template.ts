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
}

export function renderClient(operations: OperationRow[]): string {
  const rows = operations
    .map(
      (op) =>
        `  ${op.operationId}: { method: '${op.method}', path: '${op.path}', authenticated: ${op.authenticated}, summary: ${JSON.stringify(op.summary)} },`,
    )
    .join('\n');
  return `import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths };
export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];

/** Every operation of the spec, by operationId. */
export const operations = {
${rows}
} as const;

export type OperationId = keyof typeof operations;

export interface ApiClientOptions extends ClientOptions {
  /** The API root, for example \`http://localhost:8080/api/v1\`. */
  baseUrl: string;
  /** A bearer token; sent as \`Authorization: Bearer <token>\`. */
  token?: string;
}

/** A failed call: the HTTP status and the RFC 9457 problem the server sent. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(problem ? \`\${status} \${problem.title}: \${problem.detail}\` : \`HTTP \${status}\`);
    this.name = 'ApiError';
  }
}

/** What the upload helpers accept as the bytes to send. */
export type UploadBody = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadFileRequest {
  name: string;
  mimeType: string;
  /** Required for streams; taken from the body for bytes and Blobs. */
  size?: number;
  /** A folder or stack of the project to upload into. */
  parentid?: string;
}

export interface UploadOptions {
  /**
   * Rewrites the signed URL before the PUT, for a proxy in between, or for a
   * mock server whose examples point elsewhere. The URL is used unchanged
   * when this is not given.
   */
  resolveUploadUrl?: (url: string) => string;
  signal?: AbortSignal;
}

export type ApiClient = Client<paths> & {
  /** Request an upload URL, then PUT the bytes with the signed headers. Resolves to the stored file box. */
  uploadFile(
    projectid: string,
    file: UploadFileRequest,
    body: UploadBody,
    options?: UploadOptions,
  ): Promise<{ upload: Schemas['UploadUrlResponse']; box: Schemas['FileBox'] }>;
  /** Request an artwork upload URL, then PUT the image. Resolves to the project, now with its artwork. */
  uploadArtwork(
    projectid: string,
    image: Omit<UploadFileRequest, 'parentid'>,
    body: UploadBody,
    options?: UploadOptions,
  ): Promise<{ upload: Schemas['ArtworkUploadUrlResponse']; project: Schemas['Project'] }>;
};

export function createApiClient({ token, headers, ...options }: ApiClientOptions): ApiClient {
  const client = createClient<paths>({
    ...options,
    headers: { ...(token ? { Authorization: \`Bearer \${token}\` } : {}), ...(headers as Record<string, string> | undefined) },
  });
  const fetchImpl = options.fetch ?? globalThis.fetch;

  async function put(
    url: string,
    contentType: string,
    metadata: Record<string, string>,
    body: UploadBody,
    upload: UploadOptions | undefined,
  ): Promise<unknown> {
    const response = await fetchImpl(
      new Request(upload?.resolveUploadUrl ? upload.resolveUploadUrl(url) : url, {
        method: 'PUT',
        headers: uploadHeaders({ contentType, metadata }),
        body: toRequestBody(body),
        signal: upload?.signal,
        // Streams need half-duplex in fetch implementations that support them.
        ...({ duplex: 'half' } as object),
      }),
    );
    const payload = await response.json().catch(() => undefined);
    if (!response.ok) throw new ApiError(response.status, payload as Problem | undefined);
    return payload;
  }

  return Object.assign(client, {
    async uploadFile(projectid: string, file: UploadFileRequest, body: UploadBody, upload?: UploadOptions) {
      const { data, error, response } = await client.POST('/projects/{projectid}/files', {
        params: { path: { projectid } },
        body: { name: file.name, mimeType: file.mimeType, size: sizeOf(body, file.size), ...(file.parentid ? { parentid: file.parentid } : {}) },
        signal: upload?.signal,
      });
      if (!data) throw new ApiError(response.status, error as Problem | undefined);
      const box = (await put(data.url, data.contentType, data.metadata, body, upload)) as Schemas['FileBox'];
      return { upload: data, box };
    },
    async uploadArtwork(projectid: string, image: Omit<UploadFileRequest, 'parentid'>, body: UploadBody, upload?: UploadOptions) {
      const { data, error, response } = await client.POST('/projects/{projectid}/artwork', {
        params: { path: { projectid } },
        body: { name: image.name, mimeType: image.mimeType, size: sizeOf(body, image.size) },
        signal: upload?.signal,
      });
      if (!data) throw new ApiError(response.status, error as Problem | undefined);
      const project = (await put(data.url, data.contentType, data.metadata, body, upload)) as Schemas['Project'];
      return { upload: data, project };
    },
  });
}

/**
 * The headers of an upload PUT, from the upload URL response: Content-Type
 * and one x-storage-meta-<key> header for each key of metadata.
 */
export function uploadHeaders(upload: { contentType: string; metadata: Record<string, string> }): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': upload.contentType };
  // Interface 4.2: "The metadata headers use the prefix x-storage-meta-".
  for (const [key, value] of Object.entries(upload.metadata)) headers[\`x-storage-meta-\${key}\`] = value;
  return headers;
}

function sizeOf(body: UploadBody, declared: number | undefined): number {
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  if (declared === undefined) throw new TypeError('Give the size in bytes when uploading from a stream.');
  return declared;
}

function toRequestBody(body: UploadBody): BodyInit {
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body as BodyInit;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body;
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) return body;
  // An async iterable (a Node.js Readable is one): adapt it to a web stream.
  const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}
`;
}
