/**
 * The mock against the real server: the same bad requests must be refused
 * the same way (status, problem `type`, detail, and each offending field,
 * parameter or header in `errors`), so that a partner who gets a request
 * right on the mock gets it right on the server. Then what only the mock
 * does: its base path, URLs that lead back to it, Prefer, CORS, and
 * `npm run mock` itself.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../contract-tests/support/ports.ts';
import { startTestServer, type TestServer } from '../server/testing/test-server.ts';
import { onePixelPng } from '../server/testing/fixtures.ts';
import { MOCK_TAKES_ANY_TOKEN, startMock, type RunningMock } from './mock-server.ts';
import { MINT_A_TOKEN } from '../server/http/auth.ts';
import { parsePrefer } from './prefer.ts';
import { rewriteApiUrls } from './signed-urls.ts';

let server: TestServer;
let serverToken: string;
let mock: RunningMock;

beforeAll(async () => {
  [server, mock] = await Promise.all([startTestServer('sqlite'), startMock()]);
  serverToken = await server.token('mock-parity@example.com');
});

afterAll(async () => {
  await Promise.all([server?.stop(), mock?.stop()]);
});

const signature = 'a'.repeat(64);
const signedQuery = `expires=1795318800000&signature=${signature}`;
const json = { 'Content-Type': 'application/json' };

interface BadRequest {
  name: string;
  path: string;
  init?: RequestInit;
  /** false: send no Authorization header. */
  authorized?: boolean;
  /** Where the request goes: under the API's base (default) or the origin. */
  from?: 'api' | 'origin';
}

const badRequests: BadRequest[] = [
  { name: 'an unknown body field (colour)', path: '/players', init: { method: 'POST', headers: json, body: JSON.stringify({ name: 'x', colour: 'red' }) } },
  { name: 'a field of the wrong type (name: 5)', path: '/players', init: { method: 'POST', headers: json, body: JSON.stringify({ name: 5 }) } },
  {
    name: 'several body faults at once (a missing name and two unknown fields)',
    path: '/players',
    init: { method: 'POST', headers: json, body: JSON.stringify({ nme: 'x', colour: 'red' }) },
  },
  {
    name: 'a nested field outside its enum, beside an unknown nested field',
    path: '/players',
    init: { method: 'POST', headers: json, body: JSON.stringify({ name: 'x', options: { quality: 'bogus', volume: 3 } }) },
  },
  { name: 'a query parameter outside its enum (?quality=bogus on a GET)', path: '/projects/prj_7h2kq9xw4m/files/box_f1le9k3m2p/download?quality=bogus' },
  { name: 'a query parameter the operation does not take', path: '/players?quality=bogus' },
  { name: 'a malformed If-Match header', path: '/me/preferences', init: { method: 'POST', headers: { ...json, 'If-Match': 'nope' }, body: '{}' } },
  {
    name: 'an upload PUT missing its three x-storage-meta-* headers',
    path: `/upload/files/upl_9d2m4k7q1z?${signedQuery}`,
    init: { method: 'PUT', headers: { 'Content-Type': 'audio/wav' }, body: 'abcd' },
    authorized: false,
  },
  {
    name: 'an artwork PUT missing its writeback header',
    path: `/upload/artwork/upl_2w8e5r1t6y?${signedQuery}`,
    init: {
      method: 'PUT',
      headers: { 'Content-Type': 'image/png', 'x-storage-meta-destination': 'artwork', 'x-storage-meta-projectid': 'prj_7h2kq9xw4m', 'x-storage-meta-boxpath': 'b' },
      body: onePixelPng,
    },
    authorized: false,
  },
  {
    name: 'an artwork PUT that is not an image',
    path: `/upload/artwork/upl_2w8e5r1t6y?${signedQuery}`,
    init: {
      method: 'PUT',
      headers: {
        'Content-Type': 'text/plain',
        'x-storage-meta-destination': 'artwork',
        'x-storage-meta-projectid': 'prj_7h2kq9xw4m',
        'x-storage-meta-boxpath': 'b',
        'x-storage-meta-writeback': 'project.artwork',
      },
      body: 'not a picture',
    },
    authorized: false,
  },
  { name: 'a malformed signature on a signed download', path: '/download/box_f1le9k3m2p?expires=1795318800000&signature=nothex', authorized: false },
  { name: 'a signed download without its signature', path: '/download/box_f1le9k3m2p?expires=1795318800000', authorized: false },
  {
    name: 'a malformed signature on an upload PUT',
    path: '/upload/files/upl_9d2m4k7q1z?expires=1795318800000&signature=xyz',
    init: {
      method: 'PUT',
      headers: { 'Content-Type': 'audio/wav', 'x-storage-meta-destination': 'file', 'x-storage-meta-projectid': 'prj_7h2kq9xw4m', 'x-storage-meta-boxpath': 'b' },
      body: 'abcd',
    },
    authorized: false,
  },
  { name: 'malformed JSON', path: '/players', init: { method: 'POST', headers: json, body: '{"name": ' } },
  { name: 'a JSON body over the 1 MB limit', path: '/players', init: { method: 'POST', headers: json, body: JSON.stringify({ name: 'x'.repeat(1_100_000) }) } },
  { name: 'a NUL character in a JSON string', path: '/players', init: { method: 'POST', headers: json, body: JSON.stringify({ name: 'a\u0000b' }) } },
  {
    name: 'a gzip body that is not gzip',
    path: '/players',
    init: { method: 'POST', headers: { ...json, 'Content-Encoding': 'gzip' }, body: '{"name": "x"}' },
  },
  { name: 'an empty JSON body', path: '/players', init: { method: 'POST', headers: json, body: '' } },
  { name: 'a body of the wrong content type', path: '/players', init: { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'hello' } },
  { name: 'a POST without a body or content type', path: '/players', init: { method: 'POST' } },
  { name: 'a missing bearer token', path: '/players', authorized: false },
  { name: 'an Authorization header that is not Bearer', path: '/players', init: { headers: { Authorization: 'Basic YTpi' } }, authorized: false },
  { name: 'an unknown path under /api/v1', path: '/nothing/here' },
  { name: 'an unknown path under /api/v1, without a token', path: '/nothing/here', authorized: false },
  { name: 'a path outside /api/v1', path: '/players', from: 'origin' },
  { name: 'a method the path does not take', path: '/players', init: { method: 'DELETE' } },
  { name: 'an encoded NUL in the URL', path: '/players/ply_%00' },
  { name: 'request headers over 16 KiB', path: '/players', init: { headers: { 'X-Padding': 'a'.repeat(20 * 1024) } } },
];

interface Refusal {
  status: number;
  contentType: string | null;
  wwwAuthenticate: string | null;
  allow: string | null;
  body: Record<string, unknown>;
}

async function refusal(target: { url: string; apiUrl: string }, token: string, request: BadRequest): Promise<Refusal> {
  const headers = new Headers(request.init?.headers);
  if (request.authorized !== false) headers.set('Authorization', `Bearer ${token}`);
  const base = request.from === 'origin' ? target.url : target.apiUrl;
  const response = await fetch(base + request.path, { ...request.init, headers });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${base}${request.path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  // A challenge names the API's resource metadata (RFC 9728 §5.1) on each server's own origin: the same but for it.
  const wwwAuthenticate = response.headers.get('www-authenticate')?.replaceAll(target.url, '<origin>') ?? null;
  return { status: response.status, contentType: response.headers.get('content-type'), wwwAuthenticate, allow: response.headers.get('allow'), body };
}

/** What must be the same: everything but `instance`, which is each server's own request id. */
function comparable({ body, ...rest }: Refusal) {
  const { instance, ...problem } = body;
  expect(instance, 'every problem names its occurrence').toMatch(/^req_/);
  // A 401 ends by saying where a token comes from, which differs on purpose: the server's admin CLI, or any token on the mock.
  if (typeof problem.detail === 'string') problem.detail = problem.detail.replace(MINT_A_TOKEN, '<where a token comes from>').replace(MOCK_TAKES_ANY_TOKEN, '<where a token comes from>');
  return { ...rest, body: problem };
}

describe('the mock refuses bad requests as the server does', () => {
  it.each(badRequests.map((request) => [request.name, request] as const))('%s', async (_name, request) => {
    const onServer = await refusal({ url: server.address, apiUrl: server.apiUrl }, serverToken, request);
    const onMock = await refusal(mock, 'any-token', request);
    expect(onServer.status, 'the server refuses it').toBeGreaterThanOrEqual(400);
    expect(onServer.contentType).toMatch(/^application\/problem\+json/);
    expect(comparable(onMock)).toEqual(comparable(onServer));
  });

  it('lists every missing x-storage-meta-* header of an upload PUT at once', async () => {
    const request = badRequests.find((candidate) => candidate.name.includes('missing its three'))!;
    const { body } = await refusal(mock, 'any-token', request);
    expect((body.errors as Array<{ header?: string }>).map((error) => error.header)).toEqual([
      'x-storage-meta-destination',
      'x-storage-meta-projectid',
      'x-storage-meta-boxpath',
    ]);
  });

  it('accepts a gzip-compressed JSON body, as the server does', async () => {
    const response = await fetch(`${mock.apiUrl}/players`, {
      method: 'POST',
      headers: { ...json, 'Content-Encoding': 'gzip', Authorization: 'Bearer any' },
      body: gzipSync(JSON.stringify({ name: 'Compressed' })),
    });
    expect(response.status).toBe(200);
  });
});

describe('the mock on its own', () => {
  const auth = { Authorization: 'Bearer any-token' };

  it('answers under /api/v1, and nothing outside it', async () => {
    const players = await fetch(`${mock.apiUrl}/players`, { headers: auth });
    expect(players.status).toBe(200);
    expect(Array.isArray(await players.json())).toBe(true);
    const outside = await fetch(`${mock.url}/players`, { headers: auth });
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await outside.json()) as { type: string }).type).toBe('/problems/not-found');
  });

  it('names its API\'s resource metadata in a 401 (RFC 9728 §5.1) and serves it there, with no authorization server', async () => {
    const refused = await fetch(`${mock.apiUrl}/players`);
    expect(refused.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl).toBe(`${mock.url}/.well-known/oauth-protected-resource/api/v1`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    expect(metadata.resource).toBe(mock.apiUrl);
    expect(metadata.bearer_methods_supported).toEqual(['header']);
    // The mock takes any token: no authorization server issues them.
    expect(metadata).not.toHaveProperty('authorization_servers');
  });

  it('gives upload URLs that lead back to it, and takes the PUT there', async () => {
    const answer = await fetch(`${mock.apiUrl}/projects/prj_7h2kq9xw4m/files`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ name: 'take.wav', mimeType: 'audio/wav', size: 4 }),
    });
    expect(answer.status).toBe(200);
    const upload = (await answer.json()) as { url: string; contentType: string; metadata: Record<string, string> };
    expect(upload.url.startsWith(`${mock.apiUrl}/upload/files/`)).toBe(true);
    const headers: Record<string, string> = { 'Content-Type': upload.contentType };
    for (const [key, value] of Object.entries(upload.metadata)) headers[`x-storage-meta-${key}`] = value;
    const put = await fetch(upload.url, { method: 'PUT', headers, body: 'abcd' });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { object: string }).object).toBe('file');
  });

  it('gives artwork upload URLs that lead back to it, and takes the image there', async () => {
    const answer = await fetch(`${mock.apiUrl}/projects/prj_7h2kq9xw4m/artwork`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ name: 'cover.png', mimeType: 'image/png', size: onePixelPng.byteLength }),
    });
    const upload = (await answer.json()) as { url: string; metadata: Record<string, string> };
    expect(upload.url.startsWith(`${mock.apiUrl}/upload/artwork/`)).toBe(true);
    const headers: Record<string, string> = { 'Content-Type': 'image/png' };
    for (const [key, value] of Object.entries(upload.metadata)) headers[`x-storage-meta-${key}`] = value;
    const put = await fetch(upload.url, { method: 'PUT', headers, body: onePixelPng });
    expect(put.status).toBe(200);
    const project = (await put.json()) as { artwork?: { url: string } };
    expect(project.artwork?.url.startsWith(`${mock.apiUrl}/download/`)).toBe(true);
    expect((await fetch(project.artwork!.url)).status).toBe(200);
  });

  it('gives download and peaks URLs that lead back to it, and serves them there', async () => {
    for (const path of ['/projects/prj_7h2kq9xw4m/files/box_f1le9k3m2p/download', '/projects/prj_7h2kq9xw4m/files/box_f1le9k3m2p/peaks']) {
      const answer = await fetch(mock.apiUrl + path, { headers: auth });
      expect(answer.status).toBe(200);
      const { url } = (await answer.json()) as { url: string };
      expect(url.startsWith(`${mock.apiUrl}/download/`)).toBe(true);
      const file = await fetch(url);
      expect(file.status).toBe(200);
      // A download carries the safety headers the spec documents.
      expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('starts the URLs in its answers with PUBLIC_URL when it is given one', async () => {
    const behindProxy = await startMock({ publicUrl: 'https://mock.example.test/' });
    try {
      const answer = await fetch(`http://127.0.0.1:${behindProxy.port}/api/v1/projects/prj_7h2kq9xw4m/files/box_f1le9k3m2p/download`, { headers: auth });
      const { url } = (await answer.json()) as { url: string };
      expect(url.startsWith('https://mock.example.test/api/v1/download/')).toBe(true);
    } finally {
      await behindProxy.stop();
    }
  });

  it('answers another documented status on Prefer: code=…, as a problem naming the request', async () => {
    const response = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'code=404' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { type: string; instance: string };
    expect(problem.type).toBe('/problems/not-found');
    expect(problem.instance).toBe(response.headers.get('x-request-id'));
    const tooLarge = await fetch(`${mock.apiUrl}/players`, { method: 'POST', headers: { ...json, ...auth, Prefer: 'code=413' }, body: '{"name":"x"}' });
    expect(tooLarge.status).toBe(413);
  });

  it("names the ids asked for in a documented problem's detail, not the example's", async () => {
    const player = await fetch(`${mock.apiUrl}/players/ply_asked4for`, { headers: { ...auth, Prefer: 'code=404' } });
    expect(player.status).toBe(404);
    const { detail } = (await player.json()) as { detail: string };
    expect(detail).toContain('ply_asked4for');
    expect(detail).not.toContain('ply_4c8n2r7t1v');
    const file = await fetch(`${mock.apiUrl}/projects/prj_mine1234/files/box_mine5678`, { headers: { ...auth, Prefer: 'code=404' } });
    expect(((await file.json()) as { detail: string }).detail).toMatch(/prj_mine1234|box_mine5678/);
  });

  it('tells a caller without a token that any token works here, not to mint one with the admin CLI', async () => {
    const response = await fetch(`${mock.apiUrl}/players`);
    expect(response.status).toBe(401);
    const { detail } = (await response.json()) as { detail: string };
    expect(detail).toMatch(/takes any token/);
    expect(detail).not.toMatch(/admin/);
  });

  it('still refuses an invalid request when Prefer asks for a success', async () => {
    const response = await fetch(`${mock.apiUrl}/players`, { method: 'POST', headers: { ...json, ...auth, Prefer: 'code=200' }, body: '{"name":5}' });
    expect(response.status).toBe(400);
  });

  it('refuses a Prefer it cannot follow, naming what it can', async () => {
    const undocumented = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'code=418' } });
    expect(undocumented.status).toBe(400);
    const problem = (await undocumented.json()) as { detail: string; errors: Array<{ header: string }> };
    expect(problem.errors[0].header).toBe('prefer');
    expect(problem.detail).toMatch(/getPlayer documents no 418 response\. It documents 200, 400, [\d, ]+\./);
    const noSuchExample = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'example=nope' } });
    expect(noSuchExample.status).toBe(400);
    expect(((await noSuchExample.json()) as { detail: string }).detail).toContain('default');
    const byName = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'example=default' } });
    expect(byName.status).toBe(200);
  });

  it("answers a status the operation does not name from its default response's example of that status", async () => {
    const serverError = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'code=500' } });
    expect(serverError.status).toBe(500);
    expect(serverError.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await serverError.json()).toMatchObject({ type: '/problems/internal-error', status: 500 });
    const tooLargeHeaders = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'code=431' } });
    expect(await tooLargeHeaders.json()).toMatchObject({ type: '/problems/headers-too-large', status: 431 });
  });

  it('makes an answer up from the schema on Prefer: dynamic=true', async () => {
    const fromExample = await (await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: auth })).json();
    const response = await fetch(`${mock.apiUrl}/players/ply_4c8n2r7t1v`, { headers: { ...auth, Prefer: 'dynamic=true' } });
    expect(response.status).toBe(200);
    const made = (await response.json()) as { object: string };
    expect(made.object).toBe('player');
    expect(made).not.toEqual(fromExample);
  });

  it('lets browser apps on other origins call it, Prefer included', async () => {
    const preflight = await fetch(`${mock.apiUrl}/players`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, prefer' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['authorization', 'prefer']));
    const call = await fetch(`${mock.apiUrl}/players`, { headers: { ...auth, Origin: 'https://app.example.test' } });
    expect(call.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('the pieces', () => {
  it('moves only absolute /api/v1/ URLs onto the mock, keeping path and query', () => {
    const body = {
      url: 'http://localhost:8080/api/v1/upload/files/upl_1?expires=1&signature=ab',
      playerUrl: 'http://localhost:8080/p/ply_1',
      nested: [{ url: 'https://api.example.test/api/v1/download/box_1?variant=peaks-json' }],
      name: '/api/v1/not-a-url',
      api: 'http://localhost:8080/api/v1',
    };
    expect(rewriteApiUrls(body, 'http://127.0.0.1:4010')).toEqual({
      url: 'http://127.0.0.1:4010/api/v1/upload/files/upl_1?expires=1&signature=ab',
      playerUrl: 'http://localhost:8080/p/ply_1',
      nested: [{ url: 'http://127.0.0.1:4010/api/v1/download/box_1?variant=peaks-json' }],
      name: '/api/v1/not-a-url',
      api: 'http://localhost:8080/api/v1',
    });
  });

  it('reads Prefer as RFC 7240 writes it, ignoring preferences meant for others', () => {
    expect(parsePrefer('return=minimal, code=404; example="with space"')).toEqual({ code: 404, exampleKey: 'with space' });
    expect(parsePrefer('dynamic=true, seed=7')).toEqual({ dynamic: true, seed: '7' });
    expect(parsePrefer(undefined)).toEqual({});
    expect(parsePrefer('code=four')).toMatchObject({ status: 400, type: 'validation-error' });
    expect(parsePrefer('dynamic=yes')).toMatchObject({ status: 400 });
  });
});

describe('npm run mock (mock/main.ts)', () => {
  it('serves the API under /api/v1 on PORT, says where, and stops on SIGTERM', async () => {
    const port = await freePort();
    // What package.json's "mock" script runs: tsx mock/main.ts.
    const child = spawn(resolve(import.meta.dirname, '../node_modules/.bin/tsx'), [resolve(import.meta.dirname, 'main.ts')], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const apiUrl = await new Promise<string>((found, failed) => {
        const lines = createInterface({ input: child.stdout });
        lines.on('line', (line) => {
          const match = /^Mock API listening at (\S+)$/.exec(line);
          if (match) found(match[1]);
        });
        exited.then((code) => failed(new Error(`mock/main.ts exited with ${code} before it listened:\n${stderr}`)));
      });
      expect(apiUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
      const response = await fetch(`${apiUrl}/players`, { headers: { Authorization: 'Bearer any-token' } });
      expect(response.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('says which port is taken, and how to choose another, when PORT is in use', async () => {
    const child = spawn(resolve(import.meta.dirname, '../node_modules/.bin/tsx'), [resolve(import.meta.dirname, 'main.ts')], {
      env: { ...process.env, PORT: String(mock.port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)));
    expect(code).toBe(1);
    expect(stderr).toContain(`Port ${mock.port} on 127.0.0.1 is in use`);
    expect(stderr).toContain('PORT=');
  });
});
