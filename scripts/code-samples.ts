/**
 * Request samples for the docs: Redoc's `x-codeSamples` on every operation,
 * a curl command and a TypeScript call through the generated client, made
 * from the spec's own examples when the spec is bundled (scripts/bundle.ts).
 * Nobody writes them by hand, so an operation added to the spec has its
 * samples at the next `npm run generate`, and they change with its examples.
 * scripts/code-samples.test.ts runs every curl sample against the mock and
 * type-checks every TypeScript sample against the generated client.
 *
 * What a sample sends: the path parameters, the required query and header
 * parameters, and the request body, each from its first example (a
 * parameter's `example` or `examples`, else its schema's `example`, `default`
 * or first `enum` value); the bearer token unless the operation's
 * `security` is empty. Optional parameters are left out, so a sample shows
 * the least a call needs.
 */

/** The API root the samples call: a server started with `npm start`, as the spec's first server. */
export const SAMPLE_BASE_URL = 'http://localhost:8080/api/v1';
/** Files the samples of binary uploads send, by media type of the request body; the test makes them. */
export const SAMPLE_FILES: Record<string, string> = { 'image/*': 'cover.png', '*/*': 'mix.wav', 'application/offset+octet-stream': 'mix.wav' };

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  example?: unknown;
  examples?: Record<string, Json>;
  schema?: Json;
}

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** Follows a local $ref (`#/components/...`) of the bundled spec, as often as it takes. */
function resolve<T>(spec: Json, value: unknown): T {
  let current = value as Json;
  while (current && typeof current.$ref === 'string') {
    current = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((node, segment) => node?.[segment] as Json, spec);
  }
  return current as T;
}

function exampleOf(spec: Json, holder: { example?: unknown; examples?: Record<string, unknown> | unknown[]; schema?: Json }): unknown {
  if (holder.example !== undefined) return holder.example;
  if (holder.examples && !Array.isArray(holder.examples)) {
    const first = Object.values(holder.examples)[0];
    if (first !== undefined) return resolve<Json>(spec, first).value;
  }
  const schema = holder.schema && resolve<Json>(spec, holder.schema);
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  return undefined;
}

/** The parameters of an operation: its path item's, overridden by its own (same name and place). */
function parametersOf(spec: Json, item: Json, operation: Json): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const raw of [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]) {
    const parameter = resolve<Parameter>(spec, raw);
    byKey.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  return [...byKey.values()];
}

interface Request {
  operationId: string;
  method: (typeof METHODS)[number];
  /** The templated path, as in the spec. */
  template: string;
  path: Record<string, string>;
  /** As the examples give them (numbers stay numbers, for the typed client). */
  query: Record<string, unknown>;
  headers: Record<string, string>;
  authenticated: boolean;
  /** Only a signed-in session may call it (sessions, the password): the sample sends the session cookie, not a token. */
  sessionOnly: boolean;
  /** The success answer is not JSON (a download's bytes). */
  binaryAnswer: boolean;
  body?: { mediaType: string; json?: unknown; file?: string };
}

/** What a sample of this operation sends, from the spec's examples; throws, naming what is missing, when it cannot. */
export function sampleRequest(spec: Json, template: string, method: (typeof METHODS)[number]): Request {
  const item = (spec.paths as Record<string, Json>)[template];
  const operation = item[method] as Json;
  const request: Request = {
    operationId: operation.operationId as string,
    method,
    template,
    path: {},
    query: {},
    headers: {},
    authenticated: !(Array.isArray(operation.security) && operation.security.length === 0),
    sessionOnly:
      Array.isArray(operation.security) &&
      operation.security.length > 0 &&
      (operation.security as Json[]).every((requirement) => Object.keys(requirement).length === 1 && 'sessionCookie' in requirement),
    binaryAnswer: false,
  };
  const success = Object.entries((operation.responses as Record<string, unknown>) ?? {}).find(([status]) => /^2/.test(status));
  const answer = success && resolve<Json>(spec, success[1]);
  request.binaryAnswer = !!answer?.content && !Object.keys(answer.content as Json).some((type) => type.includes('json'));
  for (const parameter of parametersOf(spec, item, operation)) {
    if (parameter.in !== 'path' && !parameter.required) continue;
    const value = exampleOf(spec, parameter as never);
    if (value === undefined) throw new Error(`${request.operationId}: the ${parameter.in} parameter ${parameter.name} has no example to make a sample from`);
    if (parameter.in === 'path') request.path[parameter.name] = String(value);
    else if (parameter.in === 'query') request.query[parameter.name] = value;
    else if (parameter.in === 'header') request.headers[parameter.name] = String(value);
  }
  const body = operation.requestBody ? resolve<Json>(spec, operation.requestBody) : undefined;
  if (body) {
    const [mediaType, content] = Object.entries(body.content as Record<string, Json>)[0];
    if (mediaType === 'application/json') {
      const json = exampleOf(spec, content as never);
      if (json === undefined && body.required) throw new Error(`${request.operationId}: its JSON body has no example to make a sample from`);
      if (json !== undefined) request.body = { mediaType, json };
    } else {
      request.body = { mediaType, file: SAMPLE_FILES[mediaType] ?? 'body.bin' };
    }
  }
  return request;
}

/** The URL a request goes to, under `baseUrl`. */
export function sampleUrl(request: Request, baseUrl = SAMPLE_BASE_URL): string {
  const path = request.template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(request.path[name]));
  const query = new URLSearchParams(Object.entries(request.query).map(([name, value]) => [name, String(value)])).toString();
  return `${baseUrl}${path}${query ? `?${query}` : ''}`;
}

/** A shell word in single quotes, safe whatever it holds. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlSample(request: Request, baseUrl = SAMPLE_BASE_URL): string {
  const lines = [`curl -sS -X ${request.method.toUpperCase()} ${shellQuote(sampleUrl(request, baseUrl))}`];
  // Double quotes, so that the shell puts the token (or the session) in. An operation only a session may call takes the
  // session cookie, sent as from the server's own page (its Origin): a token there is refused.
  if (request.sessionOnly) lines.push(`-H "Cookie: as_session=$SESSION"`, `-H ${shellQuote(`Origin: ${new URL(baseUrl).origin}`)}`);
  else if (request.authenticated) lines.push(`-H "Authorization: Bearer $TOKEN"`);
  for (const [name, value] of Object.entries(request.headers)) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (request.body?.json !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`);
    lines.push(`-d ${shellQuote(JSON.stringify(request.body.json))}`);
  } else if (request.body?.file) {
    // A body of one exact media type (a tus PATCH's application/offset+octet-stream) says so; curl would send form-urlencoded.
    if (request.body.mediaType !== '*/*' && !Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-type')) {
      lines.push(`-H ${shellQuote(`Content-Type: ${request.body.mediaType}`)}`);
    }
    lines.push(`--data-binary @${request.body.file}`);
  }
  return lines.join(' \\\n  ');
}

/** A value as TypeScript source: JSON, with the keys that are identifiers unquoted (each key starts a line). */
const literal = (value: unknown) =>
  JSON.stringify(value, null, 2)
    .replace(/^(\s*)"([A-Za-z_$][\w$]*)":/gm, '$1$2:')
    .replace(/\n/g, '\n  ');

export function typeScriptSample(request: Request, baseUrl = SAMPLE_BASE_URL): string {
  const helper = request.operationId === 'uploadFile' || request.operationId === 'uploadArtwork';
  const setup = [
    `import { createApiClient } from './generated/client.ts';`,
    '',
    // The helpers' first step, the upload URL, needs the token.
    ...(request.sessionOnly ? ['// Only with a signed-in session: in the browser, on the server\'s own pages, whose cookie goes along by itself.'] : []),
    `const api = createApiClient({ baseUrl: ${JSON.stringify(baseUrl)}${(request.authenticated && !request.sessionOnly) || helper ? ', token: process.env.TOKEN' : ''} });`,
  ];
  // The two upload PUTs are one step of the client's helpers, which make the upload URL and send exactly its headers.
  if (helper) {
    const projectid = request.headers['x-storage-meta-projectid'];
    const [name, mimeType] = request.operationId === 'uploadFile' ? ['mix.wav', 'audio/wav'] : ['cover.png', 'image/png'];
    return [
      `import { readFile } from 'node:fs/promises';`,
      ...setup,
      `// Both steps: the upload URL (with the token), then the PUT of the bytes to it (without).`,
      `const { data, error } = await api.${request.operationId}(${JSON.stringify(projectid)}, { name: ${JSON.stringify(name)}, mimeType: ${JSON.stringify(mimeType)} }, await readFile(${JSON.stringify(request.body?.file ?? name)}));`,
    ].join('\n');
  }
  const params: Record<string, Record<string, unknown>> = {};
  if (Object.keys(request.path).length > 0) params.path = request.path;
  if (Object.keys(request.query).length > 0) params.query = request.query;
  if (Object.keys(request.headers).length > 0) params.header = request.headers;
  const init: string[] = [];
  if (Object.keys(params).length > 0) init.push(`params: ${literal(params)}`);
  if (request.body?.json !== undefined) init.push(`body: ${literal(request.body.json)}`);
  // Raw bytes (a tus PATCH): sent as they are, under the operation's media type.
  const raw = request.body?.file !== undefined && request.body.mediaType !== '*/*';
  if (raw) init.push(`body: ''`, 'bodySerializer: () => bytes', `headers: { 'Content-Type': ${JSON.stringify(request.body!.mediaType)} }`);
  if (request.binaryAnswer) init.push(`parseAs: 'blob'`);
  const call = `api.${request.method.toUpperCase()}(${JSON.stringify(request.template)}${init.length > 0 ? `, {\n  ${init.join(',\n  ')},\n}` : ''})`;
  if (raw) {
    return [`import { readFile } from 'node:fs/promises';`, ...setup, `const bytes = new Uint8Array(await readFile(${JSON.stringify(request.body!.file)}));`, `const { data, error } = await ${call};`].join('\n');
  }
  return [...setup, `const { data, error } = await ${call};`].join('\n');
}

/**
 * Adds `x-codeSamples` to every operation of a bundled spec, in place.
 * Throws, naming the operation and the parameter, when an example a sample
 * needs is missing: the bundle fails rather than documenting a broken call.
 */
export function addCodeSamples(spec: Json): void {
  for (const [template, item] of Object.entries(spec.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const request = sampleRequest(spec, template, method);
      operation['x-codeSamples'] = [
        { lang: 'Shell', label: 'curl', source: curlSample(request) },
        { lang: 'TypeScript', label: 'TypeScript (generated client)', source: typeScriptSample(request) },
      ] satisfies CodeSample[];
    }
  }
}
