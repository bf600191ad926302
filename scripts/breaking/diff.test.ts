/**
 * The breaking-change rules of diff.ts, each on a small hand-made spec: the
 * change that breaks clients is reported with its JSON path, and the
 * harmless change next to it is not.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from './check-breaking.ts';
import { breakingChanges, type JsonObject, judge, majorVersion } from './diff.ts';

/** A spec with one of everything: a list and a create operation, shared components, a webhook. */
function released(): JsonObject {
  const json = (schema: JsonObject) => ({ 'application/json': { schema } });
  const problem = { description: 'A problem', content: { 'application/problem+json': { schema: { type: 'object' } } } };
  return {
    openapi: '3.1.0',
    info: { title: 'Hand-made', version: '1.4.0' },
    paths: {
      '/players': {
        get: {
          operationId: 'listPlayers',
          parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } }],
          responses: {
            '200': {
              description: 'The players',
              headers: { ETag: { schema: { type: 'string' } } },
              content: json({ type: 'array', items: { $ref: '#/components/schemas/Player' } }),
            },
            '404': problem,
            default: problem,
          },
        },
        post: {
          operationId: 'createPlayer',
          requestBody: { required: true, content: json({ $ref: '#/components/schemas/CreatePlayerRequest' }) },
          responses: { '200': { description: 'The player', content: json({ $ref: '#/components/schemas/Player' }) }, default: problem },
        },
      },
      '/players/{playerid}': {
        parameters: [{ name: 'playerid', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        post: {
          operationId: 'updatePlayer',
          requestBody: { content: json({ type: 'object', properties: { name: { type: 'string' } } }) },
          responses: { '200': { description: 'The player', content: json({ $ref: '#/components/schemas/Player' }) } },
        },
      },
    },
    webhooks: {
      'player.created': {
        post: {
          requestBody: { content: json({ type: 'object', required: ['id', 'type'], properties: { id: { type: 'string' }, type: { const: 'player.created' }, data: { $ref: '#/components/schemas/Player' } } }) },
          responses: { '200': { description: 'Received' } },
        },
      },
    },
    components: {
      schemas: {
        Id: { type: 'string', pattern: '^[a-z]{3}_' },
        Player: {
          type: 'object',
          required: ['id', 'name', 'status'],
          properties: {
            id: { allOf: [{ $ref: '#/components/schemas/Id' }], description: 'The id' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['ready', 'failed'] },
            expires: { type: 'integer' },
          },
        },
        CreatePlayerRequest: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            color: { type: 'string' },
            quality: { anyOf: [{ $ref: '#/components/schemas/Quality' }, { type: 'null' }] },
            public: { type: ['boolean', 'null'] },
            size: { type: 'integer', maximum: 1000 },
            tags: { type: 'array', items: { type: 'string', enum: ['demo', 'final'] } },
          },
        },
        Quality: { type: 'string', enum: ['high', 'low'] },
      },
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: each test edits the hand-made spec deep down, as JSON; the checker under test reads it as JSON.
type Spec = Record<string, any>;
/** The changes a mutation of the released spec makes. */
function changesAfter(mutate: (spec: Spec) => void) {
  const revision = released() as Spec;
  mutate(revision);
  return breakingChanges(released(), revision);
}
const create = '#/components/schemas/CreatePlayerRequest';
const player = '#/components/schemas/Player';

describe('breaking changes', () => {
  it('finds none between a spec and itself', () => {
    expect(breakingChanges(released(), released())).toEqual([]);
  });

  it('reports a removed operation, not a new one', () => {
    expect(changesAfter((spec) => delete spec.paths['/players'].post)).toEqual([{ path: '#/paths/~1players/post', message: 'operation POST /players (createPlayer) removed' }]);
    expect(changesAfter((spec) => delete spec.paths['/players/{playerid}'])).toEqual([{ path: '#/paths/~1players~1{playerid}/post', message: 'operation POST /players/{playerid} (updatePlayer) removed' }]);
    expect(changesAfter((spec) => (spec.paths['/projects'] = { get: { operationId: 'listProjects', responses: { '200': { description: 'ok' } } } }))).toEqual([]);
  });

  it('reports a removed response field, and one no longer always sent, not a new one', () => {
    expect(changesAfter((spec) => delete spec.components.schemas.Player.properties.name)).toEqual([{ path: `${player}/properties/name`, message: 'response field name removed' }]);
    expect(changesAfter((spec) => (spec.components.schemas.Player.required = ['name', 'status']))).toEqual([{ path: `${player}/properties/id`, message: 'response field id is no longer always sent' }]);
    expect(changesAfter((spec) => (spec.components.schemas.Player.properties.artist = { type: 'string' }))).toEqual([]);
  });

  it('reports a removed request field, not a new optional one', () => {
    expect(changesAfter((spec) => delete spec.components.schemas.CreatePlayerRequest.properties.color)).toEqual([{ path: `${create}/properties/color`, message: 'request field color removed' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.artist = { type: 'string' }))).toEqual([]);
  });

  it('reports a removed enum value, in a response or in a request, not a new one in a request', () => {
    expect(changesAfter((spec) => (spec.components.schemas.Player.properties.status.enum = ['ready']))).toEqual([{ path: `${player}/properties/status`, message: 'response enum value "failed" removed' }]);
    expect(changesAfter((spec) => (spec.components.schemas.Quality.enum = ['high']))).toEqual([{ path: '#/components/schemas/Quality', message: 'request enum value "low" removed' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.tags.items.enum = ['final']))).toEqual([{ path: `${create}/properties/tags/items`, message: 'request enum value "demo" removed' }]);
    expect(changesAfter((spec) => (spec.webhooks['player.created'].post.requestBody.content['application/json'].schema.properties.type = { const: 'player.made' }))).toEqual([
      { path: '#/webhooks/player.created/post/requestBody/content/application~1json/schema/properties/type', message: 'response enum value "player.created" removed' },
    ]);
    expect(changesAfter((spec) => (spec.components.schemas.Quality.enum = ['high', 'low', 'lossless']))).toEqual([]);
  });

  it('reports a newly required request field, an existing one or a new one, and a newly required body', () => {
    expect(changesAfter((spec) => spec.components.schemas.CreatePlayerRequest.required.push('color'))).toEqual([{ path: `${create}/properties/color`, message: 'request field color is newly required' }]);
    expect(
      changesAfter((spec) => {
        spec.components.schemas.CreatePlayerRequest.properties.artist = { type: 'string' };
        spec.components.schemas.CreatePlayerRequest.required.push('artist');
      }),
    ).toEqual([{ path: create, message: 'request field artist is newly required' }]);
    expect(changesAfter((spec) => (spec.paths['/players/{playerid}'].post.requestBody.required = true))).toEqual([
      { path: '#/paths/~1players~1{playerid}/post/requestBody', message: 'the request body is now required' },
    ]);
    // A response field that becomes required is a promise kept, not a break.
    expect(changesAfter((spec) => spec.components.schemas.Player.required.push('expires'))).toEqual([]);
  });

  it('reports a type removed from a request union, not one added', () => {
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.public.type = 'boolean'))).toEqual([{ path: `${create}/properties/public`, message: 'narrowed: no longer accepts null' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.quality = { $ref: '#/components/schemas/Quality' }))).toEqual([
      { path: `${create}/properties/quality/anyOf/1`, message: 'no longer accepted: this branch of the union (null) was removed' },
    ]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.size.type = 'string'))).toEqual([{ path: `${create}/properties/size`, message: 'narrowed: no longer accepts integer' }]);
    // Widened: more types, a number where integers were, a union where one type was.
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.public.type = ['boolean', 'null', 'string']))).toEqual([]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.size.type = 'number'))).toEqual([]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.color = { anyOf: [{ type: 'string' }, { type: 'null' }] }))).toEqual([]);
  });

  it('reports a response type that may now be another, as a field that may now be null', () => {
    expect(changesAfter((spec) => (spec.components.schemas.Player.properties.expires.type = ['integer', 'null']))).toEqual([
      { path: `${player}/properties/expires`, message: 'may now be of type null, which clients do not expect' },
    ]);
    expect(changesAfter((spec) => (spec.components.schemas.Player.properties.name = { anyOf: [{ type: 'string' }, { type: 'null' }] }))).toEqual([
      { path: `${player}/properties/name`, message: 'may now be of type null, which clients do not expect' },
    ]);
    // Narrower in a response is fine: clients get fewer kinds of value than they handle.
    expect(changesAfter((spec) => (spec.components.schemas.Player.properties.expires.maximum = 10))).toEqual([]);
  });

  it('reports a new or lower maxLength or maximum, and a new or higher minimum, on a request field; not a higher maximum', () => {
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.name.maxLength = 100))).toEqual([{ path: `${create}/properties/name`, message: 'narrowed: maxLength lowered from 200 to 100' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.color.maxLength = 50))).toEqual([{ path: `${create}/properties/color`, message: 'narrowed: maxLength 50 added' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.size.maximum = 500))).toEqual([{ path: `${create}/properties/size`, message: 'narrowed: maximum lowered from 1000 to 500' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.name.minLength = 3))).toEqual([{ path: `${create}/properties/name`, message: 'narrowed: minLength raised from 1 to 3' }]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.size.maximum = 5000))).toEqual([]);
    expect(changesAfter((spec) => delete spec.components.schemas.CreatePlayerRequest.properties.name.maxLength)).toEqual([]);
  });

  it('takes a new bound on an integer at or past 2^53 − 1 as harmless (no value beyond is interoperable, RFC 8259), and one inside as narrowing', () => {
    // A request field that was an integer without bounds, and the bound a revision adds to it.
    const unbounded = (mutate: (schema: Spec) => void) => {
      const base = released() as Spec;
      const revision = released() as Spec;
      base.components.schemas.CreatePlayerRequest.properties.size = { type: 'integer' };
      revision.components.schemas.CreatePlayerRequest.properties.size = { type: 'integer' };
      mutate(revision.components.schemas.CreatePlayerRequest.properties.size);
      return breakingChanges(base, revision);
    };
    expect(unbounded((schema) => (schema.maximum = 2 ** 53 - 1))).toEqual([]);
    expect(unbounded((schema) => (schema.minimum = -(2 ** 53) + 1))).toEqual([]);
    expect(unbounded((schema) => (schema.maximum = 8640000000000000))).toEqual([{ path: `${create}/properties/size`, message: 'narrowed: maximum 8640000000000000 added' }]);
    expect(unbounded((schema) => (schema.exclusiveMaximum = 2 ** 53 - 1))).toEqual([{ path: `${create}/properties/size`, message: 'narrowed: exclusiveMaximum 9007199254740991 added' }]);
  });

  it('reports a new pattern or format on a request field, and fields newly refused', () => {
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.color.pattern = '^#[0-9a-f]{6}$'))).toEqual([
      { path: `${create}/properties/color`, message: 'narrowed: pattern "^#[0-9a-f]{6}$" added' },
    ]);
    expect(changesAfter((spec) => (spec.components.schemas.CreatePlayerRequest.properties.color.format = 'uri'))).toEqual([{ path: `${create}/properties/color`, message: 'narrowed: format "uri" added' }]);
    expect(changesAfter((spec) => (spec.paths['/players/{playerid}'].post.requestBody.content['application/json'].schema.additionalProperties = false))).toEqual([
      { path: '#/paths/~1players~1{playerid}/post/requestBody/content/application~1json/schema', message: 'narrowed: fields other than the ones named are now refused (additionalProperties: false)' },
    ]);
    // The id pattern is shared by a path parameter (a request) and by responses: only the request side breaks.
    expect(changesAfter((spec) => (spec.components.schemas.Id.pattern = '^ply_'))).toEqual([{ path: '#/components/schemas/Id', message: 'narrowed: pattern changed from "^[a-z]{3}_" to "^ply_"' }]);
    // A pattern or format removed takes more values: fine.
    expect(changesAfter((spec) => delete spec.components.schemas.Id.pattern)).toEqual([]);
  });

  it('reports a removed or changed status code, not a new error status', () => {
    expect(changesAfter((spec) => delete spec.paths['/players'].get.responses['404'])).toEqual([{ path: '#/paths/~1players/get/responses/404', message: 'status 404 removed' }]);
    expect(changesAfter((spec) => delete spec.paths['/players'].get.responses.default)).toEqual([{ path: '#/paths/~1players/get/responses/default', message: 'status default removed' }]);
    expect(
      changesAfter((spec) => {
        const responses = spec.paths['/players'].post.responses;
        responses['201'] = responses['200'];
        delete responses['200'];
      }),
    ).toEqual([
      { path: '#/paths/~1players/post/responses/200', message: 'status 200 removed' },
      { path: '#/paths/~1players/post/responses', message: 'new success status 201 beside 200' },
    ]);
    expect(changesAfter((spec) => (spec.paths['/players'].post.responses['409'] = { description: 'Conflict' }))).toEqual([]);
  });

  it('reports a removed response header or media type', () => {
    expect(changesAfter((spec) => delete spec.paths['/players'].get.responses['200'].headers)).toEqual([
      { path: '#/paths/~1players/get/responses/200/headers/ETag', message: 'response header ETag removed' },
    ]);
    expect(
      changesAfter((spec) => {
        const content = spec.paths['/players'].post.requestBody.content;
        content['application/merge-patch+json'] = content['application/json'];
        delete content['application/json'];
      }),
    ).toEqual([{ path: '#/paths/~1players/post/requestBody/content/application~1json', message: 'request media type application/json no longer accepted' }]);
  });

  it('reports a removed parameter, one made required and a new required one; not a new optional one', () => {
    expect(changesAfter((spec) => (spec.paths['/players'].get.parameters = []))).toEqual([{ path: '#/paths/~1players/get/parameters/0', message: 'query parameter limit removed' }]);
    expect(changesAfter((spec) => (spec.paths['/players'].get.parameters[0].required = true))).toEqual([{ path: '#/paths/~1players/get/parameters/0', message: 'query parameter limit is now required' }]);
    expect(changesAfter((spec) => spec.paths['/players'].get.parameters.push({ name: 'cursor', in: 'query', required: true, schema: { type: 'string' } }))).toEqual([
      { path: '#/paths/~1players/get', message: 'new required query parameter cursor' },
    ]);
    expect(changesAfter((spec) => (spec.paths['/players'].get.parameters[0].schema.maximum = 50))).toEqual([{ path: '#/paths/~1players/get/parameters/0/schema', message: 'narrowed: maximum lowered from 100 to 50' }]);
    expect(changesAfter((spec) => spec.paths['/players'].get.parameters.push({ name: 'cursor', in: 'query', schema: { type: 'string' } }))).toEqual([]);
  });

  it('reports a removed webhook, and a field its payload no longer carries', () => {
    expect(changesAfter((spec) => delete spec.webhooks['player.created'])).toEqual([{ path: '#/webhooks/player.created/post', message: 'webhook player.created (POST) removed' }]);
    expect(changesAfter((spec) => delete spec.webhooks['player.created'].post.requestBody.content['application/json'].schema.properties.data)).toEqual([
      { path: '#/webhooks/player.created/post/requestBody/content/application~1json/schema/properties/data', message: 'response field data removed' },
    ]);
  });

  it('follows $refs through cycles, and reports a change of a shared component once', () => {
    const tree = (spec: Spec) => {
      spec.components.schemas.Node = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } };
      spec.components.schemas.Player.properties.tree = { $ref: '#/components/schemas/Node' };
    };
    const base = released() as Spec;
    tree(base);
    const revision = released() as Spec;
    tree(revision);
    delete revision.components.schemas.Node.properties.name;
    // Player is read by three operations and a webhook: one change.
    expect(breakingChanges(base, revision)).toEqual([{ path: '#/components/schemas/Node/properties/name', message: 'response field name removed' }]);
  });

  it('ignores text and examples', () => {
    expect(
      changesAfter((spec) => {
        spec.info.description = 'Now with words';
        spec.components.schemas.Player.description = 'A player';
        spec.components.schemas.Player.example = { id: 'ply_1', name: 'Demo', status: 'ready' };
        spec.paths['/players'].get.responses['200'].description = 'Every player';
      }),
    ).toEqual([]);
  });
});

describe('breaking changes of security', () => {
  /** The released spec with a bearer token required by default and its list operation open to anyone, and a revision of it. */
  function guarded(): Spec {
    const spec = released() as Spec;
    spec.security = [{ bearerAuth: [] }];
    spec.paths['/players'].get.security = [{ bearerAuth: [] }, {}];
    return spec;
  }
  const changesOfGuarded = (mutate: (spec: Spec) => void) => {
    const revision = guarded();
    mutate(revision);
    return breakingChanges(guarded(), revision);
  };
  const list = '#/paths/~1players/get/security';
  const create = '#/paths/~1players/post/security';

  it('reports an operation open to anyone that now needs a credential', () => {
    expect(changesAfter((spec) => (spec.security = [{ bearerAuth: [] }]))).toEqual([
      { path: list, message: 'a credential is now required: the operation was open to anyone' },
      { path: create, message: 'a credential is now required: the operation was open to anyone' },
      { path: '#/paths/~1players~1{playerid}/post/security', message: 'a credential is now required: the operation was open to anyone' },
    ]);
    expect(changesOfGuarded((spec) => (spec.paths['/players'].get.security = [{ bearerAuth: [] }]))).toEqual([{ path: list, message: 'a credential is now required: the operation was open to anyone' }]);
  });

  it('reports a way in removed, not a new one beside it', () => {
    expect(changesOfGuarded((spec) => (spec.security = [{ sessionCookie: [] }]))).toEqual([
      { path: create, message: 'a request authorized by bearerAuth is no longer accepted' },
      { path: '#/paths/~1players~1{playerid}/post/security', message: 'a request authorized by bearerAuth is no longer accepted' },
    ]);
    expect(changesOfGuarded((spec) => (spec.security = [{ bearerAuth: ['players:write'] }, { oauth2: ['players:write'] }, { sessionCookie: [] }]))).toEqual([]);
    // Two schemes that must be sent together where one was enough: a client holding the one is refused.
    expect(changesOfGuarded((spec) => (spec.security = [{ bearerAuth: [], apiKey: [] }]))).toEqual([
      { path: create, message: 'a request authorized by bearerAuth is no longer accepted' },
      { path: '#/paths/~1players~1{playerid}/post/security', message: 'a request authorized by bearerAuth is no longer accepted' },
    ]);
  });

  it('takes scopes named for the first time (the tokens made before carry every scope), not a scope added to or changed in a named list', () => {
    expect(changesOfGuarded((spec) => (spec.paths['/players'].post.security = [{ bearerAuth: ['players:write'] }]))).toEqual([]);
    const scoped = (scopes: string[]) => (spec: Spec) => (spec.paths['/players'].post.security = [{ bearerAuth: scopes }]);
    const before = guarded();
    scoped(['players:write'])(before);
    const changesTo = (scopes: string[]) => {
      const revision = guarded();
      scoped(scopes)(revision);
      return breakingChanges(before, revision);
    };
    expect(changesTo(['players:write', 'projects:write'])).toEqual([{ path: create, message: 'a token with the scopes of bearerAuth [players:write] no longer suffices: now bearerAuth [players:write, projects:write]' }]);
    expect(changesTo(['players:admin'])).toEqual([{ path: create, message: 'a token with the scopes of bearerAuth [players:write] no longer suffices: now bearerAuth [players:admin]' }]);
    expect(changesTo(['players:write'])).toEqual([]);
    expect(changesTo([])).toEqual([]);
  });
});

describe('the verdict', () => {
  const withVersion = (version: string, mutate: (spec: Spec) => void = () => {}) => {
    const spec = released() as Spec;
    spec.info.version = version;
    mutate(spec);
    return spec;
  };
  const removeField = (spec: Spec) => delete spec.components.schemas.Player.properties.name;

  it('reads the major version of info.version', () => {
    expect(majorVersion('1.4.0')).toBe(1);
    expect(majorVersion('12.0.0-beta.1')).toBe(12);
    expect(majorVersion('v2.1')).toBe(2);
    expect(majorVersion('latest')).toBeUndefined();
  });

  it('fails on a breaking change unless the major version went up, and lists each change with its path', () => {
    const minor = judge(released(), withVersion('1.5.0', removeField));
    expect(minor.ok).toBe(false);
    expect(minor.text).toContain('1 breaking change(s) since the released spec 1.4.0');
    expect(minor.text).toContain(`${player}/properties/name\n      response field name removed`);
    expect(minor.text).toContain('to 2.0.0');
    const major = judge(released(), withVersion('2.0.0', removeField));
    expect(major.ok).toBe(true);
    expect(major.text).toContain('allowed by the new major version 2.0.0');
    // A version that is not Semantic Versioning is no new major.
    expect(judge(released(), withVersion('next', removeField)).ok).toBe(false);
  });

  it('passes an additive change under the same version', () => {
    const verdict = judge(released(), withVersion('1.4.0', (spec) => (spec.components.schemas.Player.properties.artist = { type: 'string' })));
    expect(verdict).toMatchObject({ ok: true, changes: [] });
  });
});

describe('npm run check:breaking', () => {
  let folder: string;
  const write = (name: string, spec: JsonObject) => {
    const file = join(folder, name);
    writeFileSync(file, JSON.stringify(spec));
    return file;
  };
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'check-breaking-'));
  });
  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
    vi.restoreAllMocks();
  });

  it('exits 1 and prints each change with its path on a breaking change, 0 otherwise, 2 on a missing file', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    const base = write('released.json', released());
    const broken = released() as Spec;
    delete broken.paths['/players'].get.responses['404'];
    expect(main(['--base', base, '--revision', write('broken.json', broken)])).toBe(1);
    expect(errors.mock.calls.flat().join('\n')).toContain('#/paths/~1players/get/responses/404\n      status 404 removed');
    expect(main(['--base', base, '--revision', write('same.json', released())])).toBe(0);
    expect(logs.mock.calls.flat().join('\n')).toContain('No breaking change since the released spec 1.4.0');
    expect(main(['--base', join(folder, 'none.json'), '--revision', base])).toBe(2);
  });
});
