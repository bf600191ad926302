/**
 * The partners' sandbox: any token gets an account of its own
 * with an analysed demo project on its first request; two tokens never see
 * each other's; reset puts an account back to the demo; a server that is
 * not a sandbox accepts no unknown token and has no reset; and sandbox mode
 * refuses the settings of a real deployment.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../../generated/client.ts';
import { loadConfig } from '../../config.ts';
import { openStore } from '../../repositories.ts';
import { useTestServer } from '../../testing/harness.ts';
import { freePort } from '../../testing/ports.ts';
import { SANDBOX_MARKER } from './sandbox-data-guard.ts';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** `SANDBOX=true node server/main.ts` on `dataDir`, as `SANDBOX=true npm start` runs it: its exit code and what it printed. */
async function sandboxStartOn(dataDir: string): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SANDBOX: 'true', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PROCESSING: 'external' };
  const child = spawn(process.execPath, ['server/main.ts'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', () => {
    // A sandbox that did start says so in its banner: stop it there.
    if (output.includes('SANDBOX:')) child.kill('SIGTERM');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('a sandbox server', () => {
  const t = useTestServer('sqlite', { SANDBOX: 'true', PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  const partner = (token: string) => createApiClient({ baseUrl: t.server.apiUrl, token });

  it("gives a token it has not seen an account of its own, holding an analysed demo project, on that token's first request", { timeout: 120_000 }, async () => {
    const api = partner('first-token-of-a-partner');
    const { data: projects, response } = await api.GET('/projects');
    expect(response.status).toBe(200);
    expect(projects).toHaveLength(1);
    const projectid = projects![0].id;
    const { data: boxes } = await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } });
    const byKind = (kind: string) => boxes!.filter((box) => box.object === kind);
    expect(byKind('folder').map((box) => box.name)).toEqual(['Mixes']);
    const stack = byKind('stack').find((box) => box.name === 'Night Drive') as { children?: unknown[] } | undefined;
    expect(stack?.children).toHaveLength(2);
    const files = byKind('file') as Array<{ status: string; duration?: number; versionName?: string; audio?: { loudness?: unknown } }>;
    expect(files).toHaveLength(3);
    for (const file of files) {
      expect(file.status).toBe('ready');
      expect(file.duration).toBeGreaterThan(3);
      expect(file.audio?.loudness).toBeDefined();
    }
    expect(files.map((file) => file.versionName).filter(Boolean).sort()).toEqual(['v1 rough mix', 'v2 final']);
    const { data: players } = await api.GET('/players');
    expect(players!.map((player) => player.public).sort()).toEqual([false, true]);
    // The review player's page works: its view lists the tracks with streams.
    const review = players!.find((player) => player.public)!;
    const view = await (await fetch(`${t.server.apiUrl}/players/${review.id}/view`)).json();
    expect(view.tracks.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(view.tracks[0].versions[0].streams ?? {})).not.toHaveLength(0);
  });

  it("keeps each token's account to itself", { timeout: 120_000 }, async () => {
    const [one, two] = [partner('isolated-one'), partner('isolated-two')];
    const { data: mine } = await one.GET('/projects');
    const { data: theirs } = await two.GET('/projects');
    expect(mine![0].id).not.toBe(theirs![0].id);
    const peek = await two.GET('/projects/{projectid}', { params: { path: { projectid: mine![0].id } } });
    expect(peek.response.status).toBe(404);
    // The same token again is the same account: no second demo.
    expect((await one.GET('/projects')).data).toHaveLength(1);
  });

  it('puts an account back to the demo on POST /sandbox/reset: what it made is gone, a fresh demo is there', { timeout: 120_000 }, async () => {
    const api = partner('resetting-partner');
    const { data: before } = await api.GET('/projects');
    const { data: made } = await api.POST('/projects', { body: { name: 'Mine' } });
    expect((await api.GET('/projects')).data).toHaveLength(2);
    const { data: state, response } = await api.POST('/sandbox/reset');
    expect(response.status).toBe(200);
    expect(state).toMatchObject({ object: 'sandbox', playerids: [expect.any(String), expect.any(String)] });
    const { data: after } = await api.GET('/projects');
    expect(after!.map((project) => project.id)).toEqual([state!.projectid]);
    expect(after![0].name).toBe(before![0].name);
    expect((await api.GET('/projects/{projectid}', { params: { path: { projectid: made!.id } } })).response.status).toBe(404);
    expect((await api.GET('/players')).data!.map((player) => player.id).sort()).toEqual([...state!.playerids].sort());
  });
});

describe('a server that is not a sandbox', () => {
  const t = useTestServer('sqlite');

  it('refuses a token it does not know with 401, and answers POST /sandbox/reset with 404', async () => {
    const unknown = await t.fetch('/projects', { headers: { Authorization: 'Bearer made-up-token' } });
    expect(unknown.status).toBe(401);
    const { token } = await t.as('owner@example.com');
    const reset = await t.fetch('/sandbox/reset', { method: 'POST', token });
    expect(reset.status).toBe(404);
    expect((await reset.json()).detail).toContain('not a sandbox');
  });

  it("refuses to start on a real deployment's data folder, and starts on an empty one, which it marks as its own", { timeout: 60_000 }, async () => {
    const real = mkdtempSync(join(tmpdir(), 'real-deployment-'));
    const empty = mkdtempSync(join(tmpdir(), 'new-sandbox-'));
    try {
      // A real deployment: an account with a token in its database.
      const store = await openStore({ dataDir: real });
      const user = await store.users.findOrCreate('owner@example.com', Date.now());
      await store.tokens.create(user.id, 'real token', Date.now());
      await store.close();
      const before = Object.fromEntries(readdirSync(real).map((name) => [name, statSync(join(real, name)).mtimeMs]));

      const refused = await sandboxStartOn(real);
      expect(refused.code).toBe(2);
      expect(refused.output).toContain(`SANDBOX=true refuses to start on ${real}`);
      expect(refused.output).toContain('audio-share.sqlite');
      expect(refused.output).not.toContain('nothing here is kept');
      expect(refused.output).not.toMatch(/\n\s+at /); // one message, no stack trace
      // Nothing was written: no marker, no file touched.
      expect(Object.fromEntries(readdirSync(real).map((name) => [name, statSync(join(real, name)).mtimeMs]))).toEqual(before);

      const started = await sandboxStartOn(empty);
      expect(started.output).toContain('nothing here is kept');
      expect(existsSync(join(empty, SANDBOX_MARKER))).toBe(true);
      // Its own folder, marked, takes it again.
      expect((await sandboxStartOn(empty)).output).toContain('nothing here is kept');
    } finally {
      rmSync(real, { recursive: true, force: true });
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('refuses sandbox mode beside DATABASE_URL or an S3 bucket', () => {
    expect(() => loadConfig({ SANDBOX: 'true', DATABASE_URL: 'postgres://db/x', DATA_DIR: '/tmp/x' })).toThrow('SANDBOX=true cannot be used with DATABASE_URL');
    expect(() =>
      loadConfig({ SANDBOX: 'true', DATA_DIR: '/tmp/x', BLOB_STORE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' }),
    ).toThrow('SANDBOX=true cannot be used with BLOB_STORE=s3');
  });
});
