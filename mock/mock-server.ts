/**
 * The partner mock: the API of generated/openapi.json, answered from the
 * spec's examples by Prism (@stoplight/prism-http, used as a library), behind
 * a front that makes it behave like the real server wherever the spec alone
 * can say how:
 *
 * - the API is under `/api/v1`, as on the server, so that moving from the
 *   mock to a server changes only the host; anything else is a 404 problem;
 * - authentication, the JSON body parser (malformed JSON, size limit,
 *   compressed bodies, NUL characters) and the problem writer are the
 *   server's own middleware (server/http/), so their answers are the
 *   server's; any bearer token is accepted;
 * - Prism's validation of the request is mapped onto the server's problem
 *   shape (faults.ts): same status, `type`, detail and `errors` entries;
 * - absolute `/api/v1/…` URLs in JSON answers lead back to the mock
 *   (signed-urls.ts), and the mock answers the PUTs and signed GETs there;
 * - Prism's `Prefer: code=…, example=…, dynamic=…` picks another documented
 *   response (prefer.ts); CORS lets browser apps on any origin call it.
 *
 * It keeps no state, and checks signed URLs' signatures only for their shape.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createInstance, getHttpOperationsFromSpec, type IHttpConfig, type IHttpRequest, type IHttpResponse, type PrismHttpComponents } from '@stoplight/prism-http';
import { API_METADATA_PATH, apiMetadataUrl, authenticate, type Credentials } from '../server/http/auth.ts';
import { clientErrorAnswer, maxHeaderSize } from '../server/http/client-error.ts';
import { cors } from '../server/http/cors.ts';
import { problemHandler, toProblem } from '../server/http/errors.ts';
import { jsonBody } from '../server/http/json-body.ts';
import { refuseNulInUrl } from '../server/http/nul-characters.ts';
import { HttpProblem, notFound } from '../server/lib/problems.ts';
import { requestIds } from '../server/http/request-context.ts';
import { routeOperations } from '../server/http/route.ts';
import { contentTypeFault, defaultExampleFor, documentsStatus, namingRequestedIds, preferFault, routeFault, tusVersionFault, unknownQueryFault, validationFault, type MockOperation, type PrismDiagnostic } from './faults.ts';
import { parsePrefer } from './prefer.ts';
import { rewriteApiUrl, rewriteApiUrls } from './signed-urls.ts';
import { protectedResourceMetadata } from '../server/resources/oauth/resource-metadata.ts';

const root = resolve(import.meta.dirname, '..');
export const defaultSpecPath = resolve(root, 'generated/openapi.json');
const docsPath = resolve(root, 'generated/docs.html');

export interface MockOptions {
  /** Port to listen on; 0 (the default) for any free one. */
  port?: number;
  /** Address to listen on; 127.0.0.1 by default. */
  host?: string;
  /**
   * The URL clients reach the mock at, which URLs in its answers start with.
   * Unset, they start with `http://` and the Host the request was sent to.
   */
  publicUrl?: string;
  /** The bundled spec to mock; generated/openapi.json by default. */
  spec?: string;
  /** Called with one line per request (method, path, status, and a refusal's detail). */
  log?: (line: string) => void;
}

export interface RunningMock {
  /** The mock's origin (or its public URL), for example `http://127.0.0.1:4010`. */
  url: string;
  /** The API's base URL: `url` + `/api/v1`. */
  apiUrl: string;
  /** The port it listens on (the one chosen, when asked for port 0). */
  port: number;
  stop(): Promise<void>;
}

export async function startMock(options: MockOptions = {}): Promise<RunningMock> {
  const host = options.host ?? '127.0.0.1';
  const app = await createMockApp(options);
  // As the server: no limit on a request's duration (uploads), Node's 16 KiB for its headers, said as a problem.
  const server = createServer({ requestTimeout: 0, maxHeaderSize }, app);
  server.on('clientError', clientErrorAnswer({ debug: () => {} }));
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', failed);
      listening();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = options.publicUrl?.replace(/\/+$/, '') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { url, apiUrl: `${url}/api/v1`, port, stop: () => stop(server) };
}

function stop(server: Server): Promise<void> {
  return new Promise((stopped, failed) => {
    server.close((error) => (error ? failed(error) : stopped()));
    // Keep-alive connections would hold close() open until they time out; nothing the mock does needs finishing.
    server.closeAllConnections();
  });
}

/** The mock as an Express application, for a server of the caller's own. */
export async function createMockApp(options: Pick<MockOptions, 'publicUrl' | 'spec' | 'log'> = {}): Promise<Express> {
  const specPath = options.spec ?? defaultSpecPath;
  const operations = (await getHttpOperationsFromSpec(specPath)) as Array<Parameters<PrismHttpComponents['mock']>[0]['resource']>;
  const prism = createInstance(prismConfig, { logger: silentLogger, mock: mockUnlessRefused });
  const hasHead = headOperations(operations as MockOperation[]);
  const publicUrl = options.publicUrl?.replace(/\/+$/, '');
  /** Where the mock is, for the URLs it gives: PUBLIC_URL, or the address it was reached at. */
  const baseOf = (req: Request) => publicUrl ?? ownBase(req);
  const log = options.log;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(log));
  app.use(corsAllowingPrefer);
  app.use(refuseNulInUrl);
  app.get(['/docs', '/docs/'], (_req, res, next) => {
    if (!existsSync(docsPath)) return next(notFound('The docs site has not been built. Run npm run generate.'));
    res.sendFile(docsPath);
  });
  app.get('/openapi.json', (_req, res) => res.sendFile(specPath));
  // As on the server: problem `type` URIs (/problems/<slug>) lead to the table of problem types in the docs.
  app.get('/problems/:slug', (_req, res) => res.redirect(302, '/docs#/section/errors'));
  // The API's protected resource metadata (RFC 9728), which its challenges name, as on the server; with no
  // authorization server, as the mock takes any token.
  app.get(['/.well-known/oauth-protected-resource', API_METADATA_PATH], (req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.json(protectedResourceMetadata(baseOf(req), '/api/v1', 'Audio Share API (mock)', []));
  });

  // Paths are case-sensitive (RFC 3986 §6.2.2.1), as on the server.
  const api = express.Router({ caseSensitive: true, strict: true });
  // The server's one match of a request to its operation (http/route.ts): 404 or 405 before any credential is looked at.
  api.use(routeOperations());
  // The server's authentication, with a store that takes any token: the mock has no users.
  // The mock's own origin is wherever it was reached: a session's changes must come from there, as on a server.
  api.use(
    authenticate(anyToken, {
      howToGetOne: MOCK_TAKES_ANY_TOKEN,
      publicOrigin: (req) => `${req.protocol}://${req.get('host')}`,
      resourceMetadata: (req) => apiMetadataUrl(baseOf(req)),
    }),
  );
  api.use(jsonBody());
  api.use(rawBody);
  api.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      const preferences = parsePrefer(req.get('prefer'));
      if (preferences instanceof HttpProblem) return next(preferences);
      const config: IHttpConfig = {
        ...prismConfig,
        mock: { dynamic: preferences.dynamic ?? false, code: preferences.code, exampleKey: preferences.exampleKey, seed: preferences.seed },
      };
      const result = await prism.request(prismInput(req, res.locals.rawBody, hasHead(req.path)), operations, config)();
      if (result._tag === 'Left') return next(fromPrismError(result.left, req));
      send(res, result.right.output, baseOf(req), req.id);
    } catch (error) {
      next(error);
    }
  });
  app.use('/api/v1', api);

  // The server's words for anything outside the API.
  app.use((req, _res, next) => next(notFound(`There is nothing at ${req.method} ${req.path}. The API is under /api/v1; see /docs.`)));
  const writeProblem = problemHandler();
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const problem = toProblem(error);
    res.locals.detail = problem?.detail;
    // Not a problem: a bug of the mock, answered 500 by the handler; say what it was.
    if (!problem) console.error(`mock: ${req.method} ${req.originalUrl.split('?')[0]} failed:`, error);
    writeProblem(error, req, res, next);
  });
  return app;
}

/** As `prism mock` configures Prism, but security is the server's bearerAuth's job and answers are not re-validated. */
const prismConfig: IHttpConfig = {
  checkSecurity: false,
  validateRequest: true,
  validateResponse: false,
  errors: false,
  upstreamProxy: undefined,
  isProxy: false,
  mock: { dynamic: false },
};

type PrismMock = PrismHttpComponents['mock'];

/**
 * Prism's own mocker, wrapped below; the package exports only the instance
 * that uses it. Required, not imported: an ESM default import of this
 * CommonJS module is `module.exports` under Node but `exports.default` under
 * Vite (the tests), and `require` is the same under both.
 */
const prismMock = (createRequire(import.meta.url)('@stoplight/prism-http/dist/mocker/index.js') as { default: PrismMock }).default;

/**
 * Prism's mocker, unless the request is to be refused. Prism itself would
 * answer a refused request with the example of a documented 400 (the same
 * one, whatever the fault); here it gets the server's problem instead,
 * checked in the validator's order (faults.ts). It runs after Prism has
 * routed the request and validated it, which is why it is a mocker: it is
 * the step that sees both the operation and the diagnostics.
 */
const mockUnlessRefused: PrismMock = (options) => {
  const operation = options.resource as unknown as MockOperation;
  const request = options.input.data;
  const fault =
    tusVersionFault(operation, header(request, 'tus-resumable'), options.input.validations as PrismDiagnostic[]) ??
    contentTypeFault(operation, header(request, 'content-type')) ??
    unknownQueryFault(operation, Object.keys(request.url.query ?? {})) ??
    validationFault(options.input.validations as PrismDiagnostic[]);
  if (fault) return () => ({ _tag: 'Left', left: fault });
  // A status the operation does not name is answered from its `default` response only with an
  // example of that status (faults.ts defaultExampleFor); any other is refused, naming the ones there are.
  const code = options.config.code;
  let config = options.config;
  if (code !== undefined && !documentsStatus(operation, code)) {
    const key = defaultExampleFor(operation, code);
    if (key === undefined) return () => ({ _tag: 'Left', left: preferFault(operation, code, config.exampleKey) });
    config = { ...config, exampleKey: config.exampleKey ?? key };
  }
  const mock = prismMock({ ...options, config });
  return (logger) => {
    const answer = mock(logger);
    // Prism's NOT_FOUND here means Prefer asked for a status or example the operation does not have.
    if (answer._tag === 'Left' && answer.left.name.endsWith('#NOT_FOUND')) {
      return { _tag: 'Left', left: preferFault(operation, options.config.code, options.config.exampleKey) };
    }
    const body = answer._tag === 'Right' ? (answer.right.body as { detail?: unknown } | undefined) : undefined;
    if (answer._tag === 'Right' && body && typeof body === 'object' && typeof body.detail === 'string') {
      return { ...answer, right: { ...answer.right, body: { ...body, detail: namingRequestedIds(body.detail, operation, request.url.path) } } };
    }
    return answer;
  };
};

function header(request: IHttpRequest, name: string): string | undefined {
  const value = request.headers?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** Prism logs through pino; the mock logs one line per request itself (requestContext). */
const silentLogger = (() => {
  const logger: Record<string, unknown> = {};
  for (const level of ['trace', 'debug', 'info', 'success', 'warn', 'error', 'fatal']) logger[level] = () => {};
  logger.child = () => logger;
  return logger as unknown as PrismHttpComponents['logger'];
})();

/** Where a 401 of the mock says a token comes from: the mock has no accounts, and takes any. */
export const MOCK_TAKES_ANY_TOKEN = 'The mock takes any token, such as "Bearer any-token".';

const mockUser = { id: 'usr_mock', email: 'partner@example.com' };
/** Any token, and any session cookie, is the mock's one account, with every scope. */
const anyToken: Credentials = {
  tokens: { findHolder: async () => ({ tokenId: 'tok_mock', user: mockUser, scopes: null, disabled: false, timeExpires: null, timeLastUsed: null }) },
  sessions: {
    findActive: async (_secret, now) => ({ sessionId: 'ses_mock', user: mockUser, method: 'password', timeCreated: now, timeLastSeen: now }),
    touch: async () => {},
  },
};

/** Request ids as the server makes them (the `instance` of problems, and X-Request-Id), and the request's log line. */
function requestContext(log: MockOptions['log']) {
  const nextId = requestIds();
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = nextId(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', req.id);
    if (log) {
      res.once('finish', () => {
        // Without the query: signed URLs carry their signature there.
        const detail = typeof res.locals.detail === 'string' ? ` ${res.locals.detail}` : '';
        log(`${req.method} ${req.originalUrl.split('?')[0]} ${res.statusCode}${detail}`);
      });
    }
    next();
  };
}

/**
 * The server's CORS (server/http/cors.ts), with `Prefer` among the headers
 * a preflight allows, so that a browser app can ask the mock for another
 * response too.
 */
function corsAllowingPrefer(req: Request, res: Response, next: NextFunction) {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) =>
    setHeader(name, name.toLowerCase() === 'access-control-allow-headers' ? `${String(value)}, Prefer` : value);
  cors(req, res, () => {
    res.setHeader = setHeader;
    next();
  });
}

/** What Prism is shown of a request body that is not JSON (an upload's bytes): enough to see that there is one. */
const rawBodyShown = 64 * 1024;

/**
 * Bodies the JSON parser left alone (uploads, or a type the operation may
 * refuse) are read to their end, so that the connection stays usable, and
 * their first bytes handed to Prism as text, as `prism mock` does. The mock
 * stores nothing, so it keeps no more than that.
 */
function rawBody(req: Request, res: Response, next: NextFunction) {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (req.body !== undefined || !hasBody) return next();
  const kept: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if (size < rawBodyShown) kept.push(chunk.subarray(0, rawBodyShown - size));
    size += chunk.length;
  });
  req.once('end', () => {
    res.locals.rawBody = Buffer.concat(kept).toString('latin1');
    next();
  });
  req.once('error', () => next({ type: 'request.aborted' }));
}

/**
 * Whether a HEAD to `path` is an operation of its own in the spec (the
 * portal's tus offset), or, as everywhere else, the GET without its body.
 */
function headOperations(operations: MockOperation[]): (path: string) => boolean {
  const patterns = operations
    .filter((operation) => operation.method === 'head')
    .map((operation) => new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`));
  return (path) => patterns.some((pattern) => pattern.test(path));
}

function prismInput(req: Request, rawBody: string | undefined, headOperation = false): IHttpRequest {
  const url = new URL(req.url, 'http://mock');
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    // The server answers whatever the Accept header says; Prism would refuse a browser's "text/html" with 406.
    if (value !== undefined && name !== 'accept') headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    // Express answers HEAD as GET (without the body); so does the mock, where the spec has no HEAD of its own.
    method: (req.method === 'HEAD' && !headOperation ? 'get' : req.method.toLowerCase()) as IHttpRequest['method'],
    url: { path: url.pathname, query },
    headers,
    body: req.body !== undefined ? req.body : rawBody,
  };
}

function fromPrismError(error: Error, req: Request): unknown {
  if (error instanceof HttpProblem) return error;
  return routeFault(error, req.method, req.originalUrl.split('?')[0]) ?? error;
}

/** The mock's base for URLs in its answers: the Host the request was sent to, when it is a plain host[:port]. */
function ownBase(req: Request): string {
  const host = req.headers.host;
  if (host && /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host)) return `http://${host}`;
  const { address, port } = req.socket.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

function send(res: Response, output: IHttpResponse, base: string, requestId: string) {
  let mediaType: string | undefined;
  for (const [name, value] of Object.entries(output.headers ?? {})) {
    if (name.toLowerCase() === 'content-type') mediaType = value;
    // The spec documents it (with its one value) on the answers a key can replay; the mock keeps no state, so it never replays.
    else if (name.toLowerCase() === 'idempotent-replayed') continue;
    // A Location (the portal's upload URL) leads back to the mock too, as the URLs in JSON answers do.
    else if (value !== null && value !== undefined) res.setHeader(name, name.toLowerCase() === 'location' ? rewriteApiUrl(String(value), base) : String(value));
  }
  res.status(output.statusCode);
  if (output.body === undefined || output.statusCode === 204 || output.statusCode === 304) {
    res.end();
    return;
  }
  // A response documented as `*/*` (a download) is bytes of no known type, as the server sends a file it does not recognise.
  if (!mediaType || mediaType.includes('*')) mediaType = 'application/octet-stream';
  if (/[/+]json$/.test(mediaType)) {
    let body = rewriteApiUrls(output.body, base);
    // A documented problem (Prefer: code=404) names this occurrence, as the server's do: the request id, also in X-Request-Id.
    if (mediaType === 'application/problem+json' && body !== null && typeof body === 'object' && 'instance' in body) body = { ...body, instance: requestId };
    res.setHeader('Content-Type', `${mediaType}; charset=utf-8`);
    res.end(JSON.stringify(body));
    return;
  }
  res.setHeader('Content-Type', mediaType);
  res.end(typeof output.body === 'string' || Buffer.isBuffer(output.body) ? output.body : JSON.stringify(output.body));
}
