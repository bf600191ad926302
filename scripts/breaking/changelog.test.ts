/**
 * The changelog's differences (changelog.ts), on hand-made specs: what a
 * partner is told was added, deprecated or broken, grouped across
 * operations; the page it makes; and the list of releases it reads
 * (releases.ts), which refuses a list that disagrees with its files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changesBetween, deprecatedIn, renderChangelog } from './changelog.ts';
import type { JsonObject } from './diff.ts';
import { releases } from './releases.ts';

const problem = { description: 'A problem.', content: { 'application/problem+json': { schema: { type: 'object' } } } };

function base(): JsonObject {
  return {
    openapi: '3.1.0',
    info: { title: 'Things API', version: '1.0.0' },
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          summary: 'List things',
          tags: ['Things'],
          responses: { '200': { description: 'The things.', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } } }, default: problem },
        },
        post: {
          operationId: 'createThing',
          summary: 'Create a thing',
          tags: ['Things'],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } },
          responses: { '200': { description: 'The thing.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } }, default: problem },
        },
      },
    },
    components: { schemas: { Thing: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } } } },
  };
}

/** The base with additions, a deprecation, and one breaking change. */
function revision(): JsonObject {
  const spec = structuredClone(base()) as JsonObject & { paths: Record<string, Record<string, JsonObject>>; components: { schemas: Record<string, JsonObject> } };
  const things = spec.paths['/things'];
  things.get.parameters = [{ name: 'limit', in: 'query', schema: { type: 'integer' } }];
  things.post.parameters = [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } }];
  (things.post.requestBody as { content: { 'application/json': { schema: { properties: Record<string, JsonObject> } } } }).content['application/json'].schema.properties.options = {
    type: 'object',
    properties: { color: { type: 'string' }, size: { type: 'integer' } },
  };
  (things.post.responses as Record<string, JsonObject>)['422'] = { description: 'The key was used for another request. Send a new one.', content: problem.content };
  ((things.post.responses as Record<string, JsonObject>)['200'] as JsonObject).headers = { 'Idempotent-Replayed': { schema: { type: 'string' } } };
  Object.assign(things.get, { deprecated: true, 'x-deprecated-since': '2027-01-15', 'x-sunset': '2027-07-01' });
  spec.paths['/things/{id}'] = {
    delete: { operationId: 'deleteThing', summary: 'Delete a <thing>', tags: ['Things'], parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'Gone.' }, default: problem } },
    get: {
      operationId: 'getThing',
      summary: 'Get a thing',
      tags: ['Things'],
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'limit', in: 'query', schema: { type: 'integer' } },
      ],
      responses: { '200': { description: 'The thing.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } }, default: problem },
    },
  };
  // A new response field, and one removed (breaking): `name` is gone, `size` came.
  spec.components.schemas.Thing = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, size: { type: 'integer', deprecated: true, 'x-deprecated-since': '2027-02-01' } } };
  return spec;
}

describe('the changelog', () => {
  const { operations, changes } = changesBetween(base(), revision());
  const line = (text: string) => changes.find((change) => change.text === text);

  it('lists new operations under their tag, with their summaries', () => {
    expect(operations.map(({ operationId, method, path, tag }) => [operationId, method, path, tag])).toEqual([
      ['getThing', 'GET', '/things/{id}', 'Things'],
      ['deleteThing', 'DELETE', '/things/{id}', 'Things'],
    ]);
  });

  it('says what was added to existing operations: parameters, request fields (a new object once), answers, headers, response fields', () => {
    expect(line('New optional query parameter `limit`')?.operations).toEqual(['listThings']);
    expect(line('New optional header parameter `Idempotency-Key`')?.operations).toEqual(['createThing']);
    expect(line('New request field `options`')?.operations).toEqual(['createThing']);
    expect(line('New request field `options.color`')).toBeUndefined();
    expect(line('May now answer 422: The key was used for another request')?.operations).toEqual(['createThing']);
    expect(line('New response header `Idempotent-Replayed` (200)')?.operations).toEqual(['createThing']);
  });

  it('makes one entry of the same change to several operations, naming each', () => {
    expect(line('New response field `size`')?.operations).toEqual(['createThing']);
    expect(line('New response field `[].size`')?.operations).toEqual(['listThings']);
  });

  it('says what became deprecated, with its days', () => {
    expect(line('`GET /things` is deprecated since 2027-01-15; it stops working on 2027-07-01')).toMatchObject({ kind: 'deprecated', operations: ['listThings'] });
    expect(line('The response field `size` is deprecated since 2027-02-01')?.operations).toEqual(['createThing']);
  });

  it("lists the breaking-change gate's findings, on the operation they are under, first", () => {
    expect(changes[0].kind).toBe('breaking');
    const removed = changes.filter((change) => change.kind === 'breaking' && /name removed/.test(change.text));
    expect(removed.length).toBeGreaterThan(0);
    // `name` was removed from the shared Thing: a break of every operation that answers with it.
    expect(removed.flatMap((change) => change.operations).sort()).toEqual(['createThing', 'listThings']);
  });

  it('finds nothing between a spec and itself', () => {
    expect(changesBetween(revision(), revision())).toEqual({ operations: [], events: [], changes: [] });
  });

  it('lists what a spec deprecates, with its days', () => {
    expect(deprecatedIn(revision())).toEqual([
      { what: '`GET /things`', operations: ['listThings'], since: '2027-01-15', sunset: '2027-07-01' },
      { what: 'The response field `[].size`', operations: ['listThings'], since: '2027-02-01', sunset: undefined },
      { what: 'The response field `size`', operations: ['createThing', 'getThing'], since: '2027-02-01', sunset: undefined },
    ]);
  });

  it('makes a page of every release and what is not released yet, with text escaped, the same bytes every time', () => {
    const releases = [
      { version: '1.1.0', date: '2027-01-10', notes: 'Things can be <deleted>.', spec: revision() },
      { version: '1.0.0', date: '2026-11-23', spec: base() },
    ];
    const current = structuredClone(revision());
    (current.info as JsonObject).version = '1.2.0';
    ((current.paths as Record<string, JsonObject>)['/things/{id}'] as JsonObject).put = { operationId: 'replaceThing', summary: 'Replace a thing', tags: ['Things'], responses: { '200': { description: 'Replaced.' }, default: problem } };
    const page = renderChangelog(releases, current);
    expect(page).toBe(renderChangelog(releases, current));
    expect(page).toContain('<h2 id="unreleased-title">Since 1.1.0, not yet released</h2>');
    expect(page).toContain('<code>PUT /things/{id}</code> Replace a thing');
    expect(page).toContain('<h2 id="v1.1.0-title">1.1.0 <span class="date">released 2027-01-10</span></h2>');
    expect(page).toContain('<p>Things can be &lt;deleted&gt;.</p>');
    expect(page).toContain('Delete a &lt;thing&gt;');
    expect(page).toContain('<p>The first release: 2 operations.</p>');
    expect(page).toContain('<span class="breaking">Breaking:</span>');
    expect(page).not.toMatch(/<script/i);
    // The deprecations of the current spec, in their table.
    expect(page).toMatch(/<td data-label="What"><code>GET \/things<\/code><\/td><td data-label="In"><code>listThings<\/code><\/td><td data-label="Deprecated since">2027-01-15<\/td><td data-label="Stops working on">2027-07-01<\/td>/);
  });
});

describe('the list of releases', () => {
  const withFiles = (list: unknown, files: Record<string, unknown>, check: (dir: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'releases-'));
    try {
      writeFileSync(join(dir, 'releases.json'), JSON.stringify(list));
      for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(content));
      check(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const spec = (version: string) => ({ openapi: '3.1.0', info: { title: 'x', version }, paths: {} });

  it('reads each release with its bundle, newest first', () => {
    withFiles([{ version: '1.1.0', date: '2027-01-10' }, { version: '1.0.0', date: '2026-11-23' }], { '1.1.0.json': spec('1.1.0'), '1.0.0.json': spec('1.0.0') }, (dir) => {
      expect(releases(dir).map((release) => [release.version, release.date, release.file])).toEqual([
        ['1.1.0', '2027-01-10', join(dir, '1.1.0.json')],
        ['1.0.0', '2026-11-23', join(dir, '1.0.0.json')],
      ]);
    });
  });

  it('refuses a list that disagrees with its files: a missing bundle, another version inside, the oldest first, a bad day', () => {
    withFiles([{ version: '1.1.0', date: '2027-01-10' }], {}, (dir) => expect(() => releases(dir)).toThrow(/1\.1\.0\.json is missing/));
    withFiles([{ version: '1.1.0', date: '2027-01-10' }], { '1.1.0.json': spec('1.0.0') }, (dir) => expect(() => releases(dir)).toThrow(/says info.version 1\.0\.0, not 1\.1\.0/));
    withFiles([{ version: '1.0.0', date: '2026-11-23' }, { version: '1.1.0', date: '2027-01-10' }], { '1.1.0.json': spec('1.1.0'), '1.0.0.json': spec('1.0.0') }, (dir) =>
      expect(() => releases(dir)).toThrow(/the newest first/),
    );
    withFiles([{ version: '1.0.0', date: '23.11.2026' }], { '1.0.0.json': spec('1.0.0') }, (dir) => expect(() => releases(dir)).toThrow(/is not YYYY-MM-DD/));
  });

  it('reads the real list', () => {
    expect(releases()[0]).toMatchObject({ version: '1.0.0', date: '2026-11-23' });
  });
});
