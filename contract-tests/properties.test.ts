/**
 * Property-based checks made from the spec, for every operation (what Schemathesis does, in TypeScript with fast-check). Everything comes
 * from the bundled spec at run time, so an operation added to it is checked
 * without a line added here:
 *
 * - requests the spec accepts (made up from its schemas) get no 5xx, an
 *   answer that conforms to the spec (status, content type, headers, body:
 *   the suite's fetch checks every answer), and are never refused by a
 *   schema rule (a 400 whose errors say what a schema says: "must …");
 * - requests it does not accept (a body without a required field, with a
 *   field of the wrong type or one the schema does not have; a query
 *   parameter outside its schema) are refused with 400;
 * - a missing bearer token gets 401 where the spec requires one;
 * - a method a path does not have gets 405 with `Allow`;
 * - following the spec's `links`: what a create makes is readable, and once
 *   deleted is not (on the real servers; the mock keeps nothing).
 *
 * Bounded (PROPERTY_RUNS requests of each kind per operation, 4 by default)
 * and reproducible: fast-check runs from PROPERTY_SEED (a fixed default, so
 * that a run is the same every time), and a failure prints the seed and path
 * that replay it.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { arbitraryOf, breakagesOf, deref, spec, type Json } from './support/arbitraries.ts';
import { baseUrl, checkedFetch, client, onMock } from './support/context.ts';

/** An account of its own: the made-up requests change its preferences, and (on the sandbox) reset it. */
const token = inject('propertiesToken');

const seed = Number(process.env.PROPERTY_SEED ?? 20261124);
const numRuns = Number(process.env.PROPERTY_RUNS ?? 4);
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;
type Method = (typeof METHODS)[number];

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
  example?: unknown;
}
interface Operation {
  operationId: string;
  method: Method;
  template: string;
  parameters: Parameter[];
  /** The JSON body's schema; undefined for no body or a binary one. */
  jsonBody?: Json;
  binaryBody?: string;
  bearer: 'required' | 'optional' | 'none';
  links: Record<string, { operationId: string; parameters: Record<string, string> }>;
}

/**
 * Operations only a browser's session may call (managing sessions and the
 * password) are left out: these properties are the bearer API's, and those
 * operations refuse every token; contract-tests/sessions.test.ts covers them.
 */
const sessionOnly = (operation: Json) =>
  Array.isArray(operation.security) && operation.security.length > 0 && (operation.security as Json[]).every((requirement) => Object.keys(requirement).length === 1 && 'sessionCookie' in requirement);

const operations: Operation[] = Object.entries(spec.paths).flatMap(([template, item]) =>
  METHODS.filter((method) => item[method] && !sessionOnly(item[method] as Json)).map((method) => {
    const operation = item[method] as Json;
    const byKey = new Map<string, Parameter>();
    for (const raw of [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]) {
      const parameter = deref<Parameter>(raw);
      byKey.set(`${parameter.in}:${parameter.name}`, parameter);
    }
    const content = (operation.requestBody ? (deref(operation.requestBody).content as Record<string, Json>) : {}) ?? {};
    const security = (operation.security as Json[] | undefined) ?? (spec.security as Json[]);
    const bearer = !security.some((requirement) => 'bearerAuth' in requirement) ? 'none' : security.some((requirement) => Object.keys(requirement).length === 0) ? 'optional' : 'required';
    const success = Object.entries(operation.responses as Record<string, Json>).find(([status]) => /^2/.test(status))?.[1];
    return {
      operationId: operation.operationId as string,
      method,
      template,
      parameters: [...byKey.values()],
      jsonBody: content['application/json']?.schema as Json | undefined,
      binaryBody: Object.keys(content).find((type) => type !== 'application/json'),
      bearer,
      links: (success && (deref(success).links as Operation['links'])) ?? {},
    } satisfies Operation;
  }),
);
const byId = new Map(operations.map((operation) => [operation.operationId, operation]));

/** A parameter's value from the spec: its example, or its schema's. */
const exampleOf = (parameter: Parameter) => parameter.example ?? deref(parameter.schema ?? {}).example;

/** Ids of things that exist on a real server, made in beforeAll; on the mock, the spec's examples stand for them. */
const fixtures: Record<string, string> = {};

interface Call {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  withToken?: boolean;
}

function urlOf(operation: Operation, path: Record<string, unknown>, query: Record<string, unknown> = {}): string {
  const filled = operation.template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(path[name])));
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)]));
  return `${baseUrl}${filled}${search.size > 0 ? `?${search}` : ''}`;
}

/** The path parameters: things that exist (on a real server), else the spec's examples. A delete gets examples, so that the things stay. */
function pathOf(operation: Operation): Record<string, unknown> {
  return Object.fromEntries(
    operation.parameters
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => [parameter.name, (operation.method !== 'delete' && fixtures[parameter.name]) || exampleOf(parameter)]),
  );
}

/** Calls the operation through the suite's fetch, which throws when the answer breaks the spec. */
function call(operation: Operation, { path = pathOf(operation), query = {}, body, withToken = true }: Call): Promise<Response> {
  const headers = new Headers();
  for (const parameter of operation.parameters) {
    if (parameter.in === 'header' && parameter.required) headers.set(parameter.name, String(exampleOf(parameter)));
  }
  if (withToken && operation.bearer !== 'none') headers.set('Authorization', `Bearer ${token}`);
  let payload: BodyInit | undefined;
  if (operation.jsonBody && body !== undefined) {
    headers.set('Content-Type', 'application/json');
    payload = JSON.stringify(body);
  } else if (operation.binaryBody) {
    payload = new TextEncoder().encode('RIFF\0\0\0\0WAVEfmt ');
  }
  return checkedFetch(urlOf(operation, path, query), { method: operation.method.toUpperCase(), headers, body: payload });
}

/** Made-up query parameters: the required ones always, the others or not. */
function queryArbitrary(operation: Operation): fc.Arbitrary<Record<string, unknown>> {
  const query = operation.parameters.filter((parameter) => parameter.in === 'query');
  return fc.record(
    Object.fromEntries(query.map((parameter) => [parameter.name, parameter.required ? arbitraryOf(parameter.schema ?? {}) : fc.option(arbitraryOf(parameter.schema ?? {}), { nil: undefined })])),
  ) as fc.Arbitrary<Record<string, unknown>>;
}

/**
 * Refusals by a schema rule, as the validator (Ajv) words them: "must be
 * string", "must be <= 1000", "must have required property 'name'", "must
 * NOT have additional properties", "must match pattern …". A rule of the
 * service across fields ("must be greater than audioTimestamp", "must not
 * be given with boxids") is not one: no schema can say it.
 */
async function schemaRefusals(response: Response): Promise<string[]> {
  if (response.status !== 400) return [];
  const problem = (await response.clone().json()) as { errors?: Array<{ detail: string }> };
  return (problem.errors ?? []).map((error) => error.detail).filter((detail) => /^must (be (string|number|integer|boolean|object|array|null|equal to|multiple of|[<>]=? )|have required|NOT |match |pass )/.test(detail));
}

/** Things to point requests at, made anew where a test needs them whole (a sandbox reset among the requests above deletes them). */
async function makeFixtures() {
  if (onMock) return;
  const api = client(token);
  const { data: project } = await api.POST('/projects', { body: { name: 'Properties: fixtures' } });
  const { data: player } = await api.POST('/players', { body: { name: 'Properties: fixture player', projectid: project!.id } });
  const { data: uploaded } = await api.uploadFile(project!.id, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('fixture'));
  Object.assign(fixtures, { projectid: project!.id, playerid: player!.id, fileid: uploaded!.box.id });
}

beforeAll(makeFixtures, 60_000);

describe(`properties from the spec (seed ${seed}, ${numRuns} runs each)`, () => {
  describe('requests the spec accepts: no 5xx, conforming answers, no schema refusal', () => {
    it.each(operations.map((operation) => [operation.operationId, operation] as const))('%s', async (_, operation) => {
      const request = fc.record({ query: queryArbitrary(operation), body: operation.jsonBody ? arbitraryOf(operation.jsonBody) : fc.constant(undefined) });
      await fc.assert(
        fc.asyncProperty(request, async ({ query, body }) => {
          const response = await call(operation, { query, body });
          expect(response.status, `${operation.operationId} ${JSON.stringify({ query, body })}`).toBeLessThan(500);
          expect(await schemaRefusals(response), `${operation.operationId} refused what its schema accepts: ${JSON.stringify({ query, body })}`).toEqual([]);
        }),
        { seed, numRuns },
      );
    });
  });

  describe('requests the spec does not accept: 400', () => {
    const withBody = operations.filter((operation) => operation.jsonBody);
    it.each(withBody.map((operation) => [operation.operationId, operation] as const))('%s, a body broken each way', async (_, operation) => {
      await fc.assert(
        fc.asyncProperty(arbitraryOf(operation.jsonBody) as fc.Arbitrary<Json>, async (valid) => {
          for (const { what, body } of breakagesOf(operation.jsonBody, valid)) {
            const response = await call(operation, { body });
            expect(response.status, `${operation.operationId} ${what}: ${JSON.stringify(body)}`).toBe(400);
          }
        }),
        { seed, numRuns: Math.min(numRuns, 2) },
      );
    });

    const withQuery = operations.filter((operation) => operation.parameters.some((parameter) => parameter.in === 'query' && deref(parameter.schema ?? {}).type !== 'string'));
    it.each(withQuery.map((operation) => [operation.operationId, operation] as const))('%s, a query parameter outside its schema', async (_, operation) => {
      for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'query' && deref(candidate.schema ?? {}).type !== 'string')) {
        const valid = Object.fromEntries(operation.parameters.filter((other) => other.in === 'query' && other.required).map((other) => [other.name, exampleOf(other)]));
        const response = await call(operation, { query: { ...valid, [parameter.name]: 'not-a-value-of-its-schema' } });
        expect(response.status, `${operation.operationId} ?${parameter.name}=not-a-value-of-its-schema`).toBe(400);
      }
    });
  });

  describe('no bearer token where the spec requires one: 401', () => {
    const guarded = operations.filter((operation) => operation.bearer === 'required');
    it.each(guarded.map((operation) => [operation.operationId, operation] as const))('%s', async (_, operation) => {
      const response = await call(operation, { withToken: false, body: operation.jsonBody ? {} : undefined });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });
  });

  describe('a method a path does not have: 405 with Allow', () => {
    const paths = [...new Set(operations.map((operation) => operation.template))];
    it.each(paths)('%s', async (template) => {
      const defined = operations.filter((operation) => operation.template === template);
      const missing = METHODS.filter((method) => !defined.some((operation) => operation.method === method));
      for (const method of missing) {
        // Not through the suite's fetch: no operation of the spec is this request.
        const response = await fetch(urlOf(defined[0], pathOf(defined[0])), { method: method.toUpperCase(), headers: { Authorization: `Bearer ${token}` } });
        expect(response.status, `${method.toUpperCase()} ${template}`).toBe(405);
        const allowed = (response.headers.get('allow') ?? '').split(/,\s*/);
        for (const operation of defined) expect(allowed, `${method.toUpperCase()} ${template}`).toContain(operation.method.toUpperCase());
      }
    });
  });

  describe.skipIf(onMock)("the spec's links: what is made is readable, and once deleted is not (needs stored state: skipped on the mock)", () => {
    beforeAll(makeFixtures, 60_000);
    const creators = operations.filter((operation) => Object.keys(operation.links).length > 0);
    it.each(creators.map((operation) => [operation.operationId, operation] as const))('%s', async (_, creator) => {
      const body = (deref(creator.jsonBody ?? {}).example as Json | undefined) ?? (fc.sample(arbitraryOf(creator.jsonBody) as fc.Arbitrary<Json>, { seed, numRuns: 1 })[0] as Json);
      // What the spec says a valid create holds, with the path this suite's fixtures give (never another project's ids).
      const made = await call(creator, { body: exampleBodyFor(creator, body) });
      expect(made.status, `${creator.operationId}: ${await made.clone().text()}`).toBe(200);
      const created = (await made.json()) as Json;
      const requestPath = pathOf(creator);
      const follow = (link: Operation['links'][string]) => {
        const target = byId.get(link.operationId)!;
        const path = Object.fromEntries(
          Object.entries(link.parameters).map(([name, expression]) => [
            name,
            expression.startsWith('$response.body#/') ? created[expression.slice('$response.body#/'.length)] : requestPath[expression.slice('$request.path.'.length)],
          ]),
        );
        return { target, path };
      };
      const links = Object.values(creator.links);
      const read = links.map(follow).find(({ target }) => target.method === 'get');
      expect(read, `${creator.operationId} has a link to read what it makes`).toBeDefined();
      const got = await call(read!.target, { path: read!.path });
      expect(got.status).toBe(200);
      expect(((await got.json()) as Json).id).toBe(created.id);
      const remove = links.map(follow).find(({ target }) => target.method === 'delete');
      if (remove) {
        expect((await call(remove.target, { path: remove.path })).status).toBe(200);
        expect((await call(read!.target, { path: read!.path })).status).toBe(404);
      }
    });
  });
});

/** A create's body that the fixtures make valid: ids of the spec's examples replaced by the fixtures' own. */
function exampleBodyFor(operation: Operation, body: Json): Json {
  if (operation.operationId === 'createPlayer') return { name: 'Properties: linked player', projectid: fixtures.projectid };
  if (operation.operationId === 'createComment') return { message: 'Properties: a linked comment' };
  const { projectid: _projectid, folderid: _folderid, boxids: _boxids, parentid: _parentid, ...rest } = body;
  return rest;
}
