/**
 * Deprecation and Sunset from the spec. Today's spec deprecates nothing, so
 * the middleware is run here, over real HTTP on loopback behind the real body
 * parser, on a copy of the bundled spec in which an operation, a parameter
 * and a body field are marked deprecated, as a later version would mark
 * them; and the real server is checked to announce nothing it should not,
 * and the real spec to hold no unusable deprecation.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specPath } from '../app.ts';
import { backends } from '../testing/databases.ts';
import { json, useTestServer } from '../testing/harness.ts';
import { DeprecationSpecError, deprecationHeaders, deprecationsOf } from './deprecation.ts';
import { jsonBody } from './json-body.ts';
import { operationMatcher, routeOperations, type Operation } from './route.ts';
import { operationTable } from '../../scripts/operation-table.ts';

type Fields = Record<string, unknown>;
/** The parts of the bundled spec these tests mark. */
interface Spec {
  paths: Record<string, Record<string, Fields>>;
  components: { parameters: Record<string, Fields>; schemas: Record<string, { properties: Record<string, Fields> }> };
}
type Document = Parameters<typeof deprecationsOf>[0];
const bundled = () => JSON.parse(readFileSync(specPath, 'utf8')) as Spec;

// 2026-12-01 and 2027-07-01, 00:00 UTC, in seconds.
const DEC_1_2026 = Date.UTC(2026, 11, 1) / 1000;
const NOV_1_2026 = Date.UTC(2026, 10, 1) / 1000;

/** The bundled spec with createFolder, the `limit` parameter and the player option `stacks` deprecated. */
function specWithDeprecations(): Document {
  const spec = bundled();
  Object.assign(spec.paths['/projects/{projectid}/folders'].post, { deprecated: true, 'x-deprecated-since': '2026-12-01', 'x-sunset': '2027-07-01' });
  Object.assign(spec.components.parameters.Limit, { deprecated: true, 'x-deprecated-since': '2026-12-15', 'x-sunset': '2027-03-01' });
  Object.assign(spec.components.schemas.PlayerOptionsInput.properties.stacks, { deprecated: true, 'x-deprecated-since': '2026-11-01' });
  // A templated path whose concrete sibling (…/comments/export) deprecates nothing.
  Object.assign(spec.paths['/projects/{projectid}/files/{fileid}/comments/{commentid}'].get, { deprecated: true, 'x-deprecated-since': '2026-12-01' });
  return spec as unknown as Document;
}

describe('Deprecation and Sunset', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    const app = express();
    // As the server runs: the table made from the spec at generate time (operation-table.ts), the one match, then the headers.
    const table = operationTable(specWithDeprecations() as Parameters<typeof operationTable>[0]) as unknown as Operation[];
    app.use('/api/v1', routeOperations(operationMatcher(table)), jsonBody(), deprecationHeaders(), (_req, res) => {
      res.json({});
    });
    server = createServer(app);
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('announces a deprecated operation on every answer, with its sunset and the changelog', async () => {
    const response = await fetch(`${base}/projects/prj_1/folders`, json({ name: 'x' }));
    expect(response.headers.get('deprecation')).toBe(`@${DEC_1_2026}`);
    expect(response.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
    expect(response.headers.get('link')).toBe('</docs/changelog#deprecations>; rel="deprecation"; type="text/html", </docs/changelog#deprecations>; rel="sunset"; type="text/html"');
    // Another method of the same path is not deprecated.
    expect((await fetch(`${base}/projects/prj_1/folders`)).headers.get('deprecation')).toBeNull();
  });

  it('announces a deprecated parameter only to requests that send it', async () => {
    const without = await fetch(`${base}/players`);
    expect(without.headers.get('deprecation')).toBeNull();
    const withLimit = await fetch(`${base}/players?limit=5`);
    expect(withLimit.headers.get('deprecation')).toBe(`@${Date.UTC(2026, 11, 15) / 1000}`);
    expect(withLimit.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
  });

  it('announces a deprecated body field only to requests whose body holds it, at any depth', async () => {
    const without = await fetch(`${base}/players`, json({ name: 'x', options: { downloads: true } }));
    expect(without.headers.get('deprecation')).toBeNull();
    const withField = await fetch(`${base}/players`, json({ name: 'x', options: { stacks: false } }));
    expect(withField.headers.get('deprecation')).toBe(`@${NOV_1_2026}`);
    // No x-sunset: no Sunset, and no sunset link.
    expect(withField.headers.get('sunset')).toBeNull();
    expect(withField.headers.get('link')).toBe('</docs/changelog#deprecations>; rel="deprecation"; type="text/html"');
    // The same name elsewhere in the body is another field.
    expect((await fetch(`${base}/players`, json({ name: 'stacks' }))).headers.get('deprecation')).toBeNull();
  });

  it('takes a concrete path for its own operation, not for the templated one beside it', async () => {
    expect((await fetch(`${base}/projects/prj_1/files/box_1/comments/cmt_1`)).headers.get('deprecation')).toBe(`@${DEC_1_2026}`);
    expect((await fetch(`${base}/projects/prj_1/files/box_1/comments/export`)).headers.get('deprecation')).toBeNull();
  });

  it('refuses a spec whose deprecations cannot be announced: no date, an unreadable one, a sunset before the deprecation', () => {
    const spec = bundled();
    spec.paths['/players'].get.deprecated = true;
    Object.assign(spec.paths['/players'].post, { deprecated: true, 'x-deprecated-since': '2027-02-01', 'x-sunset': '2027-01-01' });
    Object.assign(spec.components.schemas.PlayerOptionsInput.properties.stacks, { deprecated: true, 'x-deprecated-since': 'soon' });
    let failure: unknown;
    try {
      deprecationsOf(spec as unknown as Document);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(DeprecationSpecError);
    const message = (failure as Error).message;
    expect(message).toMatch(/listPlayers \(GET \/players\) is deprecated without a date in x-deprecated-since/);
    expect(message).toMatch(/createPlayer \(POST \/players\) has its sunset \(2027-01-01\) before its deprecation \(2027-02-01\)/);
    expect(message).toMatch(/request field options\.stacks is deprecated without a date/);
  });

  it('finds nothing unusable in the real spec', () => {
    expect(() => deprecationsOf(bundled() as unknown as Document)).not.toThrow();
  });
});

describe.each(backends)('the real server on %s', (backend) => {
  const t = useTestServer(backend);

  it('announces no deprecation where the spec marks none', async () => {
    const { token } = await t.as(`deprecation-${backend}@example.com`);
    const answer = await t.fetch('/players?limit=1', { token });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('deprecation')).toBeNull();
    expect(answer.headers.get('sunset')).toBeNull();
    // Exposed to browser apps on other origins, for the day something is deprecated.
    expect(answer.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
  });
});
