/**
 * The compiled request validators (request-validator.ts) against their
 * reference, express-openapi-validator with the server's former request
 * options (issue 32): the same requests, over real HTTP on loopback, through
 * two apps that differ only in their validator, each answering what the
 * handler would be given (the operation's coerced query, path parameters,
 * declared headers and body) or the problem the server would answer. Any
 * difference in status, Content-Type, problem or coerced values fails.
 *
 * The requests are made from the spec, for every operation: the valid one
 * (its examples), then each parameter, header and body field wrong in the
 * ways a client gets them wrong (type, enum, length, format, missing,
 * repeated, empty, unknown, reserved characters, bracket notation, bad
 * escapes), several faults at once, other media types, defaults left out,
 * read-only fields sent, and every GET as a HEAD.
 */
import { request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specPath } from '../../app.ts';
import { operationMatcher, routeOperations, type Operation } from '../route.ts';
import { jsonBody } from '../json-body.ts';
import { problemHandler } from '../errors.ts';
import { feedValidatorTheMatch } from '../validator-match.ts';
import { compileRequestValidators, requestValidatorsOf, validateRequests } from './request-validator.ts';
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as { paths: Record<string, Record<string, Json>>; components: Record<string, Record<string, Json>> };

function deref<T = Json>(value: unknown): T {
  let node = value as Json;
  while (node && typeof node.$ref === 'string') node = (node.$ref as string).split('/').slice(1).reduce<Json>((at, key) => at[key] as Json, spec as unknown as Json);
  return node as T;
}

/** The properties of an object schema, its allOf merged (for making requests; validation reads the schema itself). */
function propertiesOf(schema: Json): { properties: Record<string, Json>; required: string[] } {
  const resolved = deref(schema);
  const properties: Record<string, Json> = { ...((resolved.properties as Record<string, Json>) ?? {}) };
  const required = [...((resolved.required as string[]) ?? [])];
  for (const part of (resolved.allOf as Json[]) ?? []) {
    const inner = propertiesOf(part);
    Object.assign(properties, inner.properties);
    required.push(...inner.required);
  }
  return { properties, required };
}

function exampleOf(holder: Json | undefined): unknown {
  if (!holder) return undefined;
  if (holder.example !== undefined) return holder.example;
  if (Array.isArray(holder.examples)) return holder.examples[0];
  if (holder.examples && typeof holder.examples === 'object') return deref(Object.values(holder.examples as Json)[0]).value;
  return undefined;
}

interface Parameter {
  name: string;
  in: 'query' | 'header' | 'path';
  required?: boolean;
  schema: Json;
  example: string;
}

interface Probe {
  label: string;
  method: string;
  /** The request target under /api/v1, sent as it is (no normalisation). */
  target: string;
  headers: Record<string, string>;
  body?: string;
}

/** A value of the parameter's type, as text. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const WRONG_BY_TYPE: Record<string, unknown[]> = {
  string: [123, true, null, { a: 1 }, ['x']],
  integer: ['seven', 1.5, null, true],
  number: ['seven', null, [1]],
  boolean: ['yes', 0, null],
  object: ['text', [1], 3],
  array: ['text', { a: 1 }, 4],
};

function probesOf(path: string, method: string, operation: Json, pathLevel: Json[]): Probe[] {
  const declared = [...((operation.parameters as Json[]) ?? [])];
  for (const parameter of pathLevel) if (!declared.some((own) => deref(own).name === deref(parameter).name)) declared.push(parameter);
  const parameters: Parameter[] = declared.map((reference) => {
    const parameter = deref(reference);
    const schema = deref(parameter.schema);
    const example = exampleOf(parameter) ?? exampleOf(schema) ?? (schema.enum as unknown[] | undefined)?.[0] ?? schema.default ?? 'x';
    return { name: parameter.name as string, in: parameter.in as Parameter['in'], required: parameter.required as boolean, schema, example: textOf(example) };
  });
  const upper = method.toUpperCase();
  const pathWith = (values: Record<string, string> = {}) =>
    path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? encodeURIComponent(parameters.find((p) => p.in === 'path' && p.name === name)?.example ?? 'x'));
  const queryOf = (pairs: Array<[string, string]>) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '');
  const requiredQuery = parameters.filter((p) => p.in === 'query' && p.required).map((p): [string, string] => [p.name, encodeURIComponent(p.example)]);
  const requiredHeaders = Object.fromEntries(parameters.filter((p) => p.in === 'header' && p.required).map((p) => [p.name, p.example]));
  const requestBody = operation.requestBody ? deref<{ required?: boolean; content: Record<string, Json> }>(operation.requestBody) : undefined;
  const json = requestBody?.content['application/json'];
  const bodyExample = json ? (exampleOf(json) ?? exampleOf(deref(json.schema))) : undefined;
  const base = (label: string, change: Partial<Probe> & { query?: Array<[string, string]> } = {}): Probe => {
    const headers: Record<string, string> = { ...requiredHeaders };
    let body: string | undefined;
    if (json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(bodyExample ?? {});
    }
    return { label: `${upper} ${path} ${label}`, method: upper, target: pathWith() + queryOf(change.query ?? requiredQuery), headers: { ...headers, ...change.headers }, body: 'body' in change ? change.body : body, ...(change.target ? { target: change.target } : {}), ...(change.method ? { method: change.method } : {}) };
  };
  const probes: Probe[] = [base('as its examples')];
  if (upper === 'GET') probes.push(base('as a HEAD', { method: 'HEAD' }));

  // Query parameters.
  const optional = parameters.filter((p) => p.in === 'query' && !p.required).map((p): [string, string] => [p.name, encodeURIComponent(p.example)]);
  if (optional.length) probes.push(base('with every optional query parameter', { query: [...requiredQuery, ...optional] }));
  probes.push(base('with an unknown query parameter', { query: [...requiredQuery, ['unknownParameter', '1']] }));
  probes.push(base('with a bracketed unknown parameter', { query: [...requiredQuery, ['filter[name]', 'x']] }));
  probes.push(base('with a bracket-only key', { query: [...requiredQuery, ['[x]', '1']] }));
  probes.push(base('with a bad escape in the query', { query: [...requiredQuery, ['unknownParameter', '%ZZ']] }));
  for (const parameter of parameters.filter((p) => p.in === 'query')) {
    const others = requiredQuery.filter(([name]) => name !== parameter.name);
    const withValue = (label: string, ...values: string[]) => probes.push(base(`${parameter.name} ${label}`, { query: [...others, ...values.map((value): [string, string] => [parameter.name, value])] }));
    if (!parameter.required) withValue('left out');
    withValue('empty', '');
    withValue('repeated', encodeURIComponent(parameter.example), encodeURIComponent(parameter.example));
    withValue('with a comma, as sent', 'a,b');
    withValue('with a colon, as sent', '2026-01-01T00:00:00Z');
    withValue("with an apostrophe, as sent", "it's");
    withValue('with an equals sign, as sent', 'a=b');
    withValue('with reserved characters percent-encoded', encodeURIComponent('a,b:c/d'));
    withValue('bracketed', `${parameter.example}`);
    probes.push(base(`${parameter.name} in bracket notation`, { query: [...others, [`${parameter.name}[x]`, '1']] }));
    probes.push(base(`${parameter.name} as an array in bracket notation`, { query: [...others, [`${parameter.name}[]`, '1']] }));
    withValue('with a bad escape', '%E0%A4%A');
    const type = parameter.schema.type as string;
    if (type === 'integer' || type === 'number') {
      for (const value of ['seven', '1.5', '007', '-1', '0', '1e3', '99999999999999999999', '+5', ' 5', '0x10']) withValue(`as ${JSON.stringify(value)}`, encodeURIComponent(value));
    }
    if (type === 'boolean') for (const value of ['true', 'false', 'TRUE', '1', '0', 'yes']) withValue(`as ${value}`, value);
    if (type === 'string') {
      if (parameter.schema.enum) withValue('outside its enum', 'notOneOfThem');
      if (typeof parameter.schema.maxLength === 'number') withValue('too long', 'x'.repeat((parameter.schema.maxLength as number) + 1));
      if (typeof parameter.schema.minLength === 'number' && (parameter.schema.minLength as number) > 1) withValue('too short', 'x');
      if (parameter.schema.pattern) withValue('against its pattern', encodeURIComponent('~not matching~'));
      if (parameter.schema.format) withValue(`not a ${parameter.schema.format}`, 'not%20valid');
    }
  }

  // Headers.
  for (const parameter of parameters.filter((p) => p.in === 'header')) {
    const without = { ...requiredHeaders };
    delete without[parameter.name];
    if (parameter.required) probes.push({ ...base(`without its ${parameter.name} header`), headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...without } });
    else probes.push(base(`with its ${parameter.name} header`, { headers: { [parameter.name]: parameter.example } }));
    probes.push(base(`with ${parameter.name} empty`, { headers: { [parameter.name]: '' } }));
    probes.push(base(`with ${parameter.name} in capitals`, { headers: { [parameter.name.toUpperCase()]: parameter.example } }));
    if (parameter.schema.enum || parameter.schema.pattern) probes.push(base(`with ${parameter.name} wrong`, { headers: { [parameter.name]: '~wrong~' } }));
    if (typeof parameter.schema.maxLength === 'number') probes.push(base(`with ${parameter.name} too long`, { headers: { [parameter.name]: 'x'.repeat((parameter.schema.maxLength as number) + 1) } }));
  }

  // Path parameters.
  for (const parameter of parameters.filter((p) => p.in === 'path')) {
    for (const value of ['a%20b', '%C3%A9t%C3%A9', 'x'.repeat(300), '123']) probes.push(base(`with ${parameter.name} ${value.slice(0, 20)}`, { target: pathWith({ [parameter.name]: value }) + queryOf(requiredQuery) }));
  }

  // The body.
  if (requestBody) {
    for (const [type, body] of [
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', 'a=b'],
      ['application/json; charset=utf-8', bodyExample === undefined ? undefined : JSON.stringify(bodyExample)],
      ['application/json; charset=UTF-8', bodyExample === undefined ? undefined : JSON.stringify(bodyExample)],
      ['Application/JSON', bodyExample === undefined ? undefined : JSON.stringify(bodyExample)],
      ['application/merge-patch+json', '{}'],
      ['image/png', 'png'],
      ['application/octet-stream', 'bytes'],
      ['multipart/form-data; boundary=x', '--x--'],
    ] as Array<[string, string | undefined]>) {
      probes.push(base(`with a ${type} body`, { headers: { 'content-type': type }, body }));
    }
    probes.push({ ...base('without a body or Content-Type'), headers: { ...requiredHeaders }, body: undefined });
  }
  if (json) {
    probes.push(base('with an empty JSON body', { body: '' }));
    for (const value of ['null', '[]', '"text"', '42', 'true', '{}']) probes.push(base(`with the body ${value}`, { body: value }));
    const example = (bodyExample ?? {}) as Json;
    const { properties, required } = propertiesOf(json.schema as Json);
    probes.push(base('with an unknown field', { body: JSON.stringify({ ...example, unknownField: 1 }) }));
    probes.push(base('with two unknown fields', { body: JSON.stringify({ ...example, unknownField: 1, another: 'x' }) }));
    const names = Object.keys(properties);
    if (names.length > 0) {
      const [first] = names;
      const wrong = WRONG_BY_TYPE[deref(properties[first]).type as string]?.[0] ?? {};
      const without = { ...example };
      if (required[0]) delete without[required[0]];
      probes.push(base('with several faults at once', { body: JSON.stringify({ ...without, [first]: wrong, unknownField: 1, zzz: 2 }) }));
      probes.push(base('with only what is required', { body: JSON.stringify(Object.fromEntries(Object.entries(example).filter(([name]) => required.includes(name)))) }));
    }
    for (const [name, reference] of Object.entries(properties)) {
      const schema = deref(reference);
      const without = { ...example };
      delete without[name];
      probes.push(base(`without ${name}`, { body: JSON.stringify(without) }));
      for (const value of WRONG_BY_TYPE[schema.type as string] ?? [null, 'text', 5]) probes.push(base(`with ${name} ${JSON.stringify(value)}`, { body: JSON.stringify({ ...example, [name]: value }) }));
      if (schema.enum) probes.push(base(`with ${name} outside its enum`, { body: JSON.stringify({ ...example, [name]: 'notOneOfThem' }) }));
      if (schema.format) probes.push(base(`with ${name} not a ${schema.format}`, { body: JSON.stringify({ ...example, [name]: 'not valid at all' }) }));
      if (typeof schema.maxLength === 'number') probes.push(base(`with ${name} too long`, { body: JSON.stringify({ ...example, [name]: 'x'.repeat((schema.maxLength as number) + 1) }) }));
      if (typeof schema.minLength === 'number') probes.push(base(`with ${name} too short`, { body: JSON.stringify({ ...example, [name]: '' }) }));
      if (typeof schema.maximum === 'number') probes.push(base(`with ${name} over its maximum`, { body: JSON.stringify({ ...example, [name]: (schema.maximum as number) + 1 }) }));
      if (schema.readOnly || schema.writeOnly) probes.push(base(`with the ${schema.readOnly ? 'read' : 'write'}-only ${name}`, { body: JSON.stringify({ ...example, [name]: example[name] ?? 'x' }) }));
      if (schema.type === 'object' || schema.properties || schema.allOf) {
        const inner = propertiesOf(schema);
        const value = (example[name] ?? {}) as Json;
        probes.push(base(`with an unknown field in ${name}`, { body: JSON.stringify({ ...example, [name]: { ...value, unknownField: true } }) }));
        for (const [innerName, innerReference] of Object.entries(inner.properties)) {
          const innerSchema = deref(innerReference);
          const wrong = WRONG_BY_TYPE[innerSchema.type as string]?.[0] ?? null;
          probes.push(base(`with ${name}.${innerName} ${JSON.stringify(wrong)}`, { body: JSON.stringify({ ...example, [name]: { ...value, [innerName]: wrong } }) }));
          const without = { ...value };
          delete without[innerName];
          probes.push(base(`without ${name}.${innerName}`, { body: JSON.stringify({ ...example, [name]: without }) }));
          if (innerSchema.readOnly || innerSchema.writeOnly) probes.push(base(`with ${name}.${innerName} (${innerSchema.readOnly ? 'read' : 'write'}-only)`, { body: JSON.stringify({ ...example, [name]: { ...value, [innerName]: value[innerName] ?? 'x' } }) }));
        }
      }
    }
  }
  return probes;
}

/** Every operation's probes, and a few requests made by hand for what the generator does not reach. */
function allProbes(): Probe[] {
  const probes: Probe[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue;
      probes.push(...probesOf(path, method, operation, (item.parameters as unknown as Json[]) ?? []));
    }
  }
  // CommentTrack is read-only: a request that sends one is refused, even inside a reply.
  probes.push({ label: 'a comment with its read-only track', method: 'POST', target: '/projects/prj_x/files/box_x/comments', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: 'Nice', track: { boxid: 'box_x', name: 'x' } }) });
  probes.push({ label: 'a player password (write-only) sent', method: 'PATCH', target: '/players/ply_x', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'secret' }) });
  probes.push({ label: 'a NUL in a query value', method: 'GET', target: '/players?limit=%00', headers: {} });
  probes.push({ label: 'a query with a fragment', method: 'GET', target: '/players?limit=5#frag', headers: {} });
  probes.push({ label: 'a lone question mark', method: 'GET', target: '/players?', headers: {} });
  probes.push({ label: 'an ampersand only', method: 'GET', target: '/players?&', headers: {} });
  probes.push({ label: 'a key without a value', method: 'GET', target: '/players?limit', headers: {} });
  probes.push({ label: 'a plus in a value', method: 'GET', target: '/players?cursor=a+b', headers: {} });
  return probes;
}

/** The echo of what the handler would be given: the operation's coerced inputs. */
function echo(req: express.Request, res: express.Response) {
  const declared = new Set<string>();
  const item = spec.paths[req.operation!.path];
  for (const reference of [...((item[req.operation!.method.toLowerCase()].parameters as Json[]) ?? []), ...((item.parameters as unknown as Json[]) ?? [])]) {
    const parameter = deref(reference);
    if (parameter.in === 'header') declared.add((parameter.name as string).toLowerCase());
  }
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => declared.has(name)));
  res.json({ operation: req.operation!.id, query: { ...(req.query as Json) }, params: req.params, headers, body: req.body ?? null });
}

/** An app with one of the two validators over `doc` (the bundled spec by default), echoing what passes. */
function appWith(validator: 'reference' | 'compiled', doc?: { spec: Json; operations: Operation[] }) {
  const app = express();
  app.set('case sensitive routing', true);
  app.set('etag', false);
  const api = express.Router({ caseSensitive: true, strict: true });
  api.use(routeOperations(doc ? operationMatcher(doc.operations) : undefined));
  api.use(jsonBody());
  if (validator === 'reference') {
    feedValidatorTheMatch();
    // The server's request options before issue 32.
    api.use(OpenApiValidator.middleware({ apiSpec: doc ? (structuredClone(doc.spec) as never) : specPath, validateRequests: { allowUnknownQueryParameters: false, allErrors: true }, validateResponses: false, validateSecurity: false, fileUploader: false }));
  } else {
    api.use(validateRequests(doc ? compileRequestValidators(structuredClone(doc.spec) as never) : requestValidatorsOf(specPath)));
  }
  api.use(doc ? (req: express.Request, res: express.Response) => res.json({ query: { ...(req.query as Json) }, params: req.params, headers: { 'x-kind': req.headers['x-kind'] }, body: req.body ?? null }) : echo);
  app.use('/api/v1', api);
  app.use(problemHandler());
  return app;
}

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function send(port: number, probe: Probe): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...probe.headers };
    if (probe.body !== undefined) headers['content-length'] = String(Buffer.byteLength(probe.body));
    const request = httpRequest({ host: '127.0.0.1', port, method: probe.method, path: `/api/v1${probe.target}`, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(probe.body);
  });
}

/**
 * What the bundled spec does not use today, so that a spec change that begins to is already held to the reference:
 * read-only and write-only fields (inline, required, and through a reference), formats, defaults in bodies and
 * queries, nested objects, arrays, oneOf, type unions with null, and several faults in one body.
 */
const FEATURES = {
  openapi: '3.1.0',
  info: { title: 'features', version: '1' },
  servers: [{ url: '/api/v1' }],
  paths: {
    '/things': {
      post: {
        operationId: 'createThing',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/things/{thingid}': {
      parameters: [{ name: 'thingid', in: 'path', required: true, schema: { type: 'string', pattern: '^thg_[a-z0-9]+$' } }],
      get: {
        operationId: 'getThing',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10, default: 5 } },
          { name: 'ratio', in: 'query', schema: { type: 'number', exclusiveMinimum: 0 } },
          { name: 'full', in: 'query', schema: { type: 'boolean', default: false } },
          { name: 'sort', in: 'query', schema: { type: 'string', enum: ['name', 'date'] } },
          { name: 'X-Kind', in: 'header', required: true, schema: { type: 'string', pattern: '^[a-z]+$' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  components: {
    schemas: {
      Stamp: { type: 'object', readOnly: true, properties: { at: { type: 'string' } } },
      Secret: { type: 'string', writeOnly: true, minLength: 4 },
      Thing: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'secret'],
        properties: {
          id: { type: 'string', readOnly: true },
          name: { type: 'string', minLength: 1, maxLength: 5 },
          secret: { $ref: '#/components/schemas/Secret' },
          stamp: { $ref: '#/components/schemas/Stamp' },
          email: { type: 'string', format: 'email' },
          site: { type: 'string', format: 'uri' },
          link: { type: 'string', format: 'uri-reference' },
          count: { type: 'integer', minimum: 0, default: 3 },
          kind: { type: 'string', enum: ['a', 'b'] },
          note: { type: ['string', 'null'] },
          tags: { type: 'array', maxItems: 2, items: { type: 'string', minLength: 2 } },
          choice: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
          options: { type: 'object', additionalProperties: false, properties: { loud: { type: 'boolean', default: false }, level: { type: 'number', maximum: 1 } } },
        },
      },
    },
  },
};

const FEATURE_OPERATIONS = [
  { id: 'createThing', method: 'POST', path: '/things', segments: ['things'] },
  { id: 'getThing', method: 'GET', path: '/things/{thingid}', segments: ['things', '{thingid}'] },
] as unknown as Operation[];

function featureProbes(): Probe[] {
  const json = { 'content-type': 'application/json' };
  const thing = { name: 'Kit', secret: 'hunter2' };
  const post = (label: string, body: unknown, headers: Record<string, string> = json): Probe => ({ label, method: 'POST', target: '/things', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const get = (label: string, target: string, headers: Record<string, string> = { 'x-kind': 'abc' }): Probe => ({ label, method: 'GET', target, headers });
  return [
    post('valid, defaults filled in', thing),
    post('with the read-only id', { ...thing, id: 'thg_1' }),
    post('with the read-only id as null', { ...thing, id: null }),
    post('with a read-only object through a reference', { ...thing, stamp: { at: 'now' } }),
    post('without the write-only secret', { name: 'Kit' }),
    post('with a short write-only secret', { ...thing, secret: 'abc' }),
    post('with bad formats', { ...thing, email: 'nope', site: 'not a uri', link: 'has space' }),
    post('with good formats', { ...thing, email: 'a@b.example', site: 'https://b.example/x', link: '../x' }),
    post('with several faults', { name: '', secret: 1, count: -1, kind: 'c', extra: true, tags: ['a', 'bb', 'cc'], options: { loud: 'yes', level: 2, other: 1 } }),
    post('with null where a union allows it', { ...thing, note: null }),
    post('with null where none allows it', { ...thing, name: null }),
    post('with oneOf matching both', { ...thing, choice: 'x' }),
    post('with oneOf matching none', { ...thing, choice: 1.5 }),
    post('with nested defaults', { ...thing, options: {} }),
    post('with numbers as text (no coercion of bodies)', { ...thing, count: '3' }),
    post('an array body', []),
    post('malformed', '{"name":'),
    post('as text', 'hello', { 'content-type': 'text/plain' }),
    get('a valid read, defaults filled in', '/things/thg_1'),
    get('coerced', '/things/thg_1?limit=7&ratio=0.5&full=true&sort=date'),
    get('out of range', '/things/thg_1?limit=11&ratio=0&full=maybe&sort=size'),
    get('a bad path id', '/things/THING'),
    get('without its header', '/things/thg_1', {}),
    get('with a bad header', '/things/thg_1', { 'x-kind': 'ABC' }),
    get('with several faults, header too', '/things/THING?limit=0&unknown=1', { 'x-kind': '1' }),
  ];
}

describe('the compiled request validators, against express-openapi-validator', () => {
  const servers: Array<{ port: number; close: () => void }> = [];
  const features: Array<{ port: number }> = [];
  beforeAll(async () => {
    for (const kind of ['reference', 'compiled'] as const) {
      const app = appWith(kind, { spec: FEATURES, operations: FEATURE_OPERATIONS }).listen(0, '127.0.0.1');
      await new Promise((ready) => app.once('listening', ready));
      features.push({ port: (app.address() as AddressInfo).port });
      servers.push({ port: (app.address() as AddressInfo).port, close: () => app.close() });
    }
    for (const kind of ['reference', 'compiled'] as const) {
      const server = appWith(kind).listen(0, '127.0.0.1');
      await new Promise((ready) => server.once('listening', ready));
      servers.push({ port: (server.address() as AddressInfo).port, close: () => server.close() });
    }
  });
  afterAll(() => {
    agent.destroy();
    for (const server of servers) server.close();
  });

  it('answer every request alike: status, problem, and the coerced query, path, headers and body', async () => {
    const probes = allProbes();
    const differences: string[] = [];
    const statuses = new Map<number, number>();
    let severalFaults = 0;
    let coerced = 0;
    const [, , reference, compiled] = servers;
    for (let i = 0; i < probes.length; i += 16) {
      await Promise.all(
        probes.slice(i, i + 16).map(async (probe) => {
          const [expected, actual] = await Promise.all([send(reference.port, probe), send(compiled.port, probe)]);
          statuses.set(expected.status, (statuses.get(expected.status) ?? 0) + 1);
          if (expected.status === 400 && expected.body && ((JSON.parse(expected.body) as { errors?: unknown[] }).errors?.length ?? 0) > 1) severalFaults++;
          if (expected.status === 200 && /"query":\{[^}]*":(\d|true|false)/.test(expected.body)) coerced++;
          if (expected.status !== actual.status || expected.type !== actual.type || expected.body !== actual.body) {
            differences.push(`${probe.label} (${probe.method} ${probe.target}${probe.body ? ` ${probe.body.slice(0, 80)}` : ''}):\n  reference ${expected.status} ${expected.body.slice(0, 400)}\n  compiled  ${actual.status} ${actual.body.slice(0, 400)}`);
          }
        }),
      );
    }
    if (process.env.DIFFERENCES_FILE) (await import('node:fs')).writeFileSync(process.env.DIFFERENCES_FILE, differences.join('\n'));
    expect(differences.slice(0, 15).join('\n'), `${differences.length} of ${probes.length} requests answered differently`).toBe('');
    // The probes reach what they are meant to: many valid requests, many refusals of each kind, several faults in one
    // answer, coerced values, and other media types refused.
    expect(probes.length).toBeGreaterThan(2000);
    expect(statuses.get(200)).toBeGreaterThan(300);
    expect(statuses.get(400)).toBeGreaterThan(1000);
    expect(statuses.get(415)).toBeGreaterThan(100);
    expect(severalFaults).toBeGreaterThan(50);
    expect(coerced).toBeGreaterThan(20);
  });

  it('answer alike on what the spec does not use yet: read-only, write-only, formats, defaults, several faults', async () => {
    const [reference, compiled] = features;
    const answers: Array<{ label: string; expected: Answer; actual: Answer }> = [];
    for (const probe of featureProbes()) answers.push({ label: probe.label, expected: await send(reference.port, probe), actual: await send(compiled.port, probe) });
    for (const { label, expected, actual } of answers) expect(actual, label).toEqual(expected);
    const byLabel = new Map(answers.map(({ label, expected }) => [label, expected]));
    // The cases reach the features: a read-only field is refused, defaults are filled in, several faults are listed.
    expect(byLabel.get('with the read-only id')?.body).toContain('is read-only');
    expect(JSON.parse(byLabel.get('valid, defaults filled in')!.body).body).toMatchObject({ count: 3 });
    expect(JSON.parse(byLabel.get('with several faults')!.body).errors.length).toBeGreaterThan(5);
    expect(byLabel.get('with bad formats')?.body).toContain('must match format');
  });
});
