/**
 * Project members' resumable uploads (tus 1.0.0), on SQLite and PostgreSQL,
 * over real HTTP with real audio made by ffmpeg: a PATCH cut mid-file and
 * resumed from HEAD's offset stores the same bytes (sha256) and the file is
 * analysed; the limits answer at creation and before a PATCH's bytes; only
 * members who may write reach an upload; a cancel removes the partial bytes;
 * a signed-in browser's session works from the server's own origin only.
 * Every wait polls a condition with a deadline.
 */
import { createHash } from 'node:crypto';
import { stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer, type Harness } from '../../testing/harness.ts';
import { backends } from '../../testing/databases.ts';
import { until } from '../../testing/until.ts';
import { sineWav } from '../../testing/audio.ts';
import { signIn } from '../../testing/sessions.ts';
import { streamedPatch, uploadMetadata } from '../../testing/portal.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import { PROJECT_UPLOAD_IDLE_MS, projectUploadDir } from './project-uploads-service.ts';
import { sweepAbandonedProjectUploads } from './project-upload-sweeper.ts';

const OWNER = 'musician@example.com';
const TUS = { 'Tus-Resumable': '1.0.0' };

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function makeProject(h: Harness, name = 'Album') {
  const { api, token } = await h.as(OWNER);
  const { data } = await api.POST('/projects', { body: { name } });
  return { projectid: data!.id, api, token };
}

const endpoint = (h: Harness, projectid: string) => `${h.server.apiUrl}/projects/${projectid}/tus`;

function create(h: Harness, projectid: string, headers: Record<string, string>, file: { size: number; filename: string; filetype?: string; parentid?: string; autoStack?: string }) {
  const { size, ...metadata } = file;
  return fetch(endpoint(h, projectid), {
    method: 'POST',
    headers: { ...TUS, ...headers, 'Upload-Length': String(size), 'Upload-Metadata': uploadMetadata(metadata) },
  });
}

function patch(url: string, headers: Record<string, string>, offset: number, bytes: Buffer) {
  return fetch(url, {
    method: 'PATCH',
    headers: { ...TUS, ...headers, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
    body: new Uint8Array(bytes),
  });
}

const head = (url: string, headers: Record<string, string>) => fetch(url, { method: 'HEAD', headers: { ...TUS, ...headers } });

async function stored(h: Harness, projectid: string, fileid: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of h.server.ctx.blobs.read(fileBlobKey(projectid, fileid))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe.each(backends)('resumable uploads of project members on %s', (backend) => {
  // Analysis in this process, polled often: a resumed file is seen analysed.
  const h = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' });

  it('resumes a PATCH cut mid-file from HEAD\'s offset: the stored bytes are the file\'s, and it is analysed', { timeout: 90_000 }, async () => {
    const { projectid, api, token } = await makeProject(h);
    const auth = { Authorization: `Bearer ${token}` };
    const audio = await sineWav(3);
    const created = await create(h, projectid, auth, { size: audio.length, filename: 'Night Drive.wav', filetype: 'audio/wav' });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    const fileid = created.headers.get('upload-file-id')!;
    expect(url).toMatch(new RegExp(`/api/v1/projects/${projectid}/tus/tup_[0-9a-z]{16}$`));
    const waiting = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } });
    expect(waiting.data).toMatchObject({ id: fileid, name: 'Night Drive.wav', status: 'awaiting-upload' });

    // The first part, then the connection drops.
    const first = streamedPatch(url, 0, audio.length, auth);
    const part = Math.floor(audio.length / 2);
    await first.send(audio.subarray(0, part));
    const uploadId = url.split('/').pop()!;
    await until(async () => (await stat(join(projectUploadDir(h.server.ctx.config.dataDir), uploadId)).catch(() => ({ size: 0 }))).size === part, 'the first part to reach the server');
    first.cut();
    expect(await first.outcome).toHaveProperty('error');

    // The client asks how far it got, and sends the rest from there.
    let offset = -1;
    await until(async () => {
      const res = await head(url, auth);
      offset = Number(res.headers.get('upload-offset'));
      return res.status === 200 && offset === part;
    }, 'HEAD to tell the bytes stored');
    const rest = await patch(url, auth, offset, audio.subarray(offset));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(audio.length));
    expect(rest.headers.get('upload-file-id')).toBe(fileid);

    expect(sha256(await stored(h, projectid, fileid))).toBe(sha256(audio));
    const status = async () => ((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data as { status?: string } | undefined)?.status;
    await until(async () => (await status()) === 'ready', 'the file to be analysed', 45_000);
    const ready = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } });
    expect(ready.data).toMatchObject({ status: 'ready', size: audio.length, duration: 3 });

    // After a reload the client HEADs the URL it kept: nothing is left to send, and the answer names the file.
    const again = await head(url, auth);
    expect(again.status).toBe(200);
    expect(again.headers.get('upload-offset')).toBe(String(audio.length));
    expect(again.headers.get('upload-length')).toBe(String(audio.length));
    expect(again.headers.get('upload-file-id')).toBe(fileid);
    // The partial bytes went into the blob store: nothing is left under the tus directory.
    await expect(stat(join(projectUploadDir(h.server.ctx.config.dataDir), uploadId))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('lands a file as requestUploadUrl does: into a stack of its own, or into the stack parentid names', async () => {
    const { projectid, api, token } = await makeProject(h);
    const auth = { Authorization: `Bearer ${token}` };
    const text = Buffer.from('lyrics\n');
    const one = await create(h, projectid, auth, { size: text.length, filename: 'lyrics.txt', filetype: 'text/plain' });
    const fileid = one.headers.get('upload-file-id')!;
    const file = (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data!;
    const two = await create(h, projectid, auth, { size: text.length, filename: 'lyrics v2.txt', filetype: 'text/plain', parentid: file.parentid! });
    expect(two.status).toBe(201);
    const second = (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: two.headers.get('upload-file-id')! } } })).data!;
    expect(second.parentid).toBe(file.parentid);
    // Creation with upload: the bytes in the POST complete the file at once.
    const whole = await fetch(endpoint(h, projectid), {
      method: 'POST',
      headers: { ...TUS, ...auth, 'Upload-Length': String(text.length), 'Upload-Metadata': uploadMetadata({ filename: 'notes.txt' }), 'Content-Type': 'application/offset+octet-stream' },
      body: new Uint8Array(text),
    });
    expect(whole.status).toBe(201);
    expect(whole.headers.get('upload-offset')).toBe(String(text.length));
    const notes = (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: whole.headers.get('upload-file-id')! } } })).data!;
    expect(notes).toMatchObject({ status: 'ready', mimeType: 'application/octet-stream' });

    const refused = await create(h, projectid, auth, { size: 4, filename: 'x.txt', parentid: fileid });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const bad = await create(h, projectid, auth, { size: 4, filename: 'x.txt', autoStack: 'maybe' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).detail).toMatch(/autoStack/);
  });

  it('answers a stranger 404 and a viewer 403, and another member\'s upload URL opens nothing', async () => {
    const { projectid, api, token } = await makeProject(h);
    await api.POST('/players', { body: { name: 'Invite', projectid, collaborators: [{ email: 'viewer@example.com', role: 'viewer' }, { email: 'editor@example.com', role: 'editor' }] } });
    const stranger = await h.as('stranger@example.com');
    const viewer = await h.as('viewer@example.com');
    const editor = await h.as('editor@example.com');
    const file = { size: 4, filename: 'a.txt', filetype: 'text/plain' };
    expect((await create(h, projectid, { Authorization: `Bearer ${stranger.token}` }, file)).status).toBe(404);
    expect((await create(h, projectid, { Authorization: `Bearer ${viewer.token}` }, file)).status).toBe(403);
    expect((await create(h, projectid, {}, file)).status).toBe(401);
    const mine = await create(h, projectid, { Authorization: `Bearer ${token}` }, file);
    expect(mine.status).toBe(201);
    const url = mine.headers.get('location')!;
    expect((await head(url, { Authorization: `Bearer ${stranger.token}` })).status).toBe(404);
    expect((await head(url, { Authorization: `Bearer ${viewer.token}` })).status).toBe(403);
    expect((await head(url, { Authorization: `Bearer ${editor.token}` })).status).toBe(404);
    expect((await patch(url, { Authorization: `Bearer ${editor.token}` }, 0, Buffer.from('abcd'))).status).toBe(404);
    // An editor uploads their own.
    expect((await create(h, projectid, { Authorization: `Bearer ${editor.token}` }, file)).status).toBe(201);
  });

  it('cancels an upload: its partial bytes, its file and the stack made for it go', async () => {
    const { projectid, api, token } = await makeProject(h);
    const auth = { Authorization: `Bearer ${token}` };
    const created = await create(h, projectid, auth, { size: 100_000, filename: 'stems.bin' });
    const url = created.headers.get('location')!;
    const fileid = created.headers.get('upload-file-id')!;
    const { parentid } = (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data!;
    expect((await patch(url, auth, 0, Buffer.alloc(40_000, 7))).status).toBe(204);
    const path = join(projectUploadDir(h.server.ctx.config.dataDir), url.split('/').pop()!);
    expect((await stat(path)).size).toBe(40_000);
    const cancelled = await fetch(url, { method: 'DELETE', headers: { ...TUS, ...auth } });
    expect(cancelled.status).toBe(204);
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(`${path}.json`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).response.status).toBe(404);
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: parentid! } } })).response.status).toBe(404);
    expect((await head(url, auth)).status).toBe(404);
  });

  it('sweeps an upload to which no byte came for a day: its bytes and its file go; one that got bytes lately stays', async () => {
    const { projectid, api, token } = await makeProject(h);
    const auth = { Authorization: `Bearer ${token}` };
    const idle = await create(h, projectid, auth, { size: 10, filename: 'idle.bin' });
    const busy = await create(h, projectid, auth, { size: 10, filename: 'busy.bin' });
    expect((await patch(idle.headers.get('location')!, auth, 0, Buffer.from('half'))).status).toBe(204);
    expect((await patch(busy.headers.get('location')!, auth, 0, Buffer.from('half'))).status).toBe(204);
    const idleId = idle.headers.get('location')!.split('/').pop()!;
    const path = join(projectUploadDir(h.server.ctx.config.dataDir), idleId);
    // A day and a minute ago, by its record and by its bytes.
    const then = Date.now() - PROJECT_UPLOAD_IDLE_MS - 60_000;
    await h.server.ctx.store.db.execute('UPDATE project_uploads SET time_created = $2 WHERE id = $1', [idleId, then]);
    await utimes(path, new Date(then), new Date(then));
    expect(await sweepAbandonedProjectUploads(h.server.ctx)).toBe(1);
    expect(await h.server.ctx.store.projectUploads.get(idleId)).toBeUndefined();
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
    const idleFile = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: idle.headers.get('upload-file-id')! } } });
    expect(idleFile.response.status).toBe(404);
    expect((await head(busy.headers.get('location')!, auth)).headers.get('upload-offset')).toBe('4');
  });

  it('takes a signed-in browser\'s session from the server\'s own origin, and refuses it from another', async () => {
    const { projectid, api } = await makeProject(h);
    const browser = await signIn(h.server, OWNER);
    const bytes = Buffer.from('hello');
    // tus-js-client in a page of the server sends Origin on POST and PATCH (fetch adds it), and Sec-Fetch-Site.
    const created = await create(h, projectid, browser.headers, { size: bytes.length, filename: 'hello.txt', filetype: 'text/plain' });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    expect((await head(url, { Cookie: browser.cookie })).status).toBe(200);
    expect((await patch(url, browser.headers, 0, bytes)).status).toBe(204);
    const fileid = created.headers.get('upload-file-id')!;
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data).toMatchObject({ status: 'ready' });
    const elsewhere = { Cookie: browser.cookie, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' };
    const refused = await create(h, projectid, elsewhere, { size: 1, filename: 'x.txt' });
    expect(refused.status).toBe(403);
    expect(await projectFiles(h, projectid)).not.toContain('x.txt');
  });

  it('advertises its capabilities to anyone, and the API\'s CORS lets apps on other origins read tus\'s headers', async () => {
    const { projectid, token } = await makeProject(h);
    const options = await fetch(endpoint(h, projectid), { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('tus-version')).toBe('1.0.0');
    expect(options.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination');
    const preflight = await fetch(endpoint(h, projectid), {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,tus-resumable,upload-length,upload-metadata' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Upload-Metadata/);
    const created = await create(h, projectid, { Authorization: `Bearer ${token}`, Origin: 'https://app.example' }, { size: 1, filename: 'x.txt' });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    expect(created.headers.get('access-control-expose-headers')).toMatch(/Upload-File-Id/);
  });
});

async function projectFiles(h: Harness, projectid: string): Promise<string[]> {
  const { api } = await h.as(OWNER);
  const { data } = await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } });
  return JSON.stringify(data).match(/"name":"[^"]*"/g) ?? [];
}

describe.each(backends)('limits of resumable uploads on %s', (backend) => {
  const h = useTestServer(backend, { MAX_UPLOAD_BYTES: '100000', STORAGE_QUOTA_BYTES: '150000' });

  it('refuses at creation a length over the upload limit or the room left, and a PATCH whose bytes would overfill, before a byte', async () => {
    const { projectid, token } = await makeProject(h);
    const auth = { Authorization: `Bearer ${token}` };
    const over = await create(h, projectid, auth, { size: 100_001, filename: 'big.bin' });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ type: '/problems/payload-too-large' });
    // Declared lengths reserve nothing: two of 90 000 bytes are both taken, though 150 000 is the quota.
    const a = await create(h, projectid, auth, { size: 90_000, filename: 'a.bin' });
    const b = await create(h, projectid, auth, { size: 90_000, filename: 'b.bin' });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await patch(a.headers.get('location')!, auth, 0, Buffer.alloc(90_000, 1))).status).toBe(204);
    // Now 90 000 bytes are kept: b's bytes would go over, refused before one is taken.
    const refused = await patch(b.headers.get('location')!, auth, 0, Buffer.alloc(90_000, 2));
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ type: '/problems/storage-quota-exceeded', quota: 150_000 });
    expect(Number((await head(b.headers.get('location')!, auth)).headers.get('upload-offset'))).toBe(0);
    // And a new declaration over the room left is refused at once.
    const late = await create(h, projectid, auth, { size: 70_000, filename: 'c.bin' });
    expect(late.status).toBe(413);
    expect(await late.json()).toMatchObject({ type: '/problems/storage-quota-exceeded' });
    // What fits still goes.
    expect((await patch(b.headers.get('location')!, auth, 0, Buffer.alloc(50_000, 2))).status).toBe(204);
  });
});
