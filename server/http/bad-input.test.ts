import { connect } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { json, useTestServer } from '../testing/harness.ts';
import { backends } from '../testing/databases.ts';
import { NulCharacterError } from '../store/db.ts';

/** Sends raw bytes (what fetch refuses to send) and answers the status line, headers and body. */
async function rawRequest(address: string, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(address);
  const socket = connect(Number(port), hostname);
  socket.end(text);
  let received = '';
  for await (const chunk of socket) received += chunk;
  const [head, ...rest] = received.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

async function expectProblem(response: Response, status: number, label = '') {
  expect(response.status, label).toBe(status);
  expect(response.headers.get('content-type'), label).toMatch(/^application\/problem\+json/);
  const problem = await response.json();
  expect(problem, label).toMatchObject({ status, type: expect.stringMatching(/^\/problems\//), detail: expect.any(String), instance: response.headers.get('x-request-id') });
  return problem;
}

describe.each(backends)('bad input on %s', (backend) => {
  const t = useTestServer(backend);

  it('answers a NUL character in a path id, with or without a token, 400', async () => {
    const { token } = await t.as('nul@example.com');
    // The reproducer: no token, a 500 on PostgreSQL.
    await expectProblem(await t.fetch(`/upload/files/x%00y?expires=1&signature=${'a'.repeat(64)}`, { method: 'PUT', body: 'x' }), 400);
    await expectProblem(await t.fetch('/upload/files/x%00y?expires=1&signature=a', { method: 'PUT', body: 'x' }), 400);
    await expectProblem(await t.fetch(`/download/box_%00?expires=1&signature=${'a'.repeat(64)}`), 400);
    await expectProblem(await t.fetch('/players/ply_%00', { token }), 400);
    await expectProblem(await t.fetch('/projects/prj_%00x/all', { token }), 400);
    const problem = await expectProblem(await t.fetch('/projects/prj_x/files/box_%00/download?quality=compressed', { token }), 400);
    expect(problem.detail).toMatch(/NUL/);
    // And in the query.
    await expectProblem(await t.fetch('/projects/prj_x/files/box_x/download?quality=%00', { token }), 400);
  });

  it('answers a malformed percent-encoding 400, on the API and on the pages around it', async () => {
    const { token } = await t.as('percent@example.com');
    for (const path of ['/players/%FF', '/players/%', '/players/%C0%80']) await expectProblem(await t.fetch(path, { token }), 400, path);
    for (const path of ['/p/%FF', '/problems/%E0%A4%A']) await expectProblem(await fetch(`${t.server.address}${path}`), 400, path);
  });

  it('answers a NUL character in any string of a JSON body 400, naming where it is', async () => {
    const { token, api } = await t.as('nul-body@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Fine' } });
    const cases: Array<[string, unknown, string]> = [
      ['/projects', { name: 'a\u0000b' }, '#/name'],
      [`/projects/${project!.id}`, { name: 'x', color: '#00000\u0000' }, '#/color'],
      ['/players', { name: 'p', projectid: `${project!.id}\u0000` }, '#/projectid'],
      ['/me/preferences', { options: { title: '\u0000' } }, '#/options/title'],
      [`/projects/${project!.id}/stacks`, { name: 's', childids: ['box_a', 'box_\u0000'] }, '#/childids/1'],
    ];
    for (const [path, body, pointer] of cases) {
      const problem = await expectProblem(await t.fetch(path, { ...json(body), token }), 400, path);
      expect(problem.errors, path).toContainEqual(expect.objectContaining({ pointer }));
    }
  });

  it('answers a body nested a hundred thousand levels deep 400, and keeps serving', async () => {
    const { token } = await t.as('deep@example.com');
    for (const body of ['['.repeat(100_000) + ']'.repeat(100_000), `{"name":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`]) {
      const problem = await expectProblem(await t.fetch('/projects', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, token }), 400);
      expect(problem.detail).toMatch(/nests deeper than 32 levels/);
    }
    expect((await t.fetch('/me', { token })).status).toBe(200);
  });

  it('answers a NUL character in a header 400 with a problem', async () => {
    const { port } = new URL(t.server.address);
    const answer = await rawRequest(
      t.server.address,
      `PUT /api/v1/upload/files/upl_x?expires=1&signature=${'a'.repeat(64)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-storage-meta-projectid: prj_\u0000x\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 400, type: '/problems/validation-error', instance: answer.headers['x-request-id'] });
  });

  it('refuses NUL characters in the store itself, on both backends', async () => {
    await expect(t.server.ctx.store.users.findOrCreate('a\u0000b@example.com', Date.now())).rejects.toThrow(NulCharacterError);
    await expect(t.server.ctx.store.db.query('SELECT $1 AS v', ['\u0000'])).rejects.toThrow(NulCharacterError);
  });

  it('answers a body that does not decode as its Content-Encoding says 400; a gzip bomb 413; a true gzip or br body is read', async () => {
    const { token } = await t.as('encoding@example.com');
    const post = (encoding: string, body: Buffer | string) =>
      t.fetch('/projects', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding }, body: body as BodyInit, token });
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const problem = await expectProblem(await post(encoding, 'this is not compressed'), 400, encoding);
      expect(problem.errors).toContainEqual(expect.objectContaining({ header: 'content-encoding' }));
    }
    // Truncated: a true gzip stream cut short.
    await expectProblem(await post('gzip', gzipSync(JSON.stringify({ name: 'cut' })).subarray(0, 12)), 400, 'truncated');
    await expectProblem(await post('gzip', gzipSync(Buffer.alloc(20 * 1024 * 1024, 32))), 413, 'bomb');
    await expectProblem(await post('compress', 'x'), 415, 'unknown encoding');
    expect((await post('gzip', gzipSync(JSON.stringify({ name: 'Zipped' })))).status).toBe(200);
    expect((await post('br', brotliCompressSync(JSON.stringify({ name: 'Brotli' })))).status).toBe(200);
  });

  it('answers request headers over 16 KiB with a 431 problem, not a bare 431', async () => {
    const response = await fetch(`${t.server.apiUrl}/me`, { headers: { 'X-Padding': 'a'.repeat(17 * 1024) } });
    const problem = await expectProblem(response, 431);
    expect(problem.type).toBe('/problems/headers-too-large');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('authenticates before reading the body: an anonymous caller gets 401 whatever it sends', async () => {
    const anonymous: Array<{ headers: Record<string, string>; body: string | Buffer }> = [
      { headers: { 'Content-Type': 'application/json' }, body: '{"name": "x",}' },
      { headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body: 'not gzip' },
      { headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body: gzipSync(Buffer.alloc(20 * 1024 * 1024, 32)) },
      { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) },
      { headers: { 'Content-Type': 'application/json', Authorization: 'Bearer as_unknown' }, body: '{"name": "\\u0000"}' },
    ];
    for (const init of anonymous) {
      const problem = await expectProblem(await t.fetch('/projects', { method: 'POST', headers: init.headers, body: init.body as BodyInit }), 401);
      expect(problem.type).toBe('/problems/unauthorized');
    }
  });
});
