/**
 * The upload portal (player option `upload`) over tus 1.0.0, on SQLite and
 * PostgreSQL: an upload lands as a file of the player's project with its
 * uploader and is analysed; a PATCH cut mid-body resumes from the server's
 * offset and the stored bytes are the file's; every limit refuses at
 * creation, before a byte is sent, with a problem; closing the portal
 * refuses at once, uploads under way included. Every wait polls a
 * condition with a deadline.
 */
import { createHash } from 'node:crypto';
import { readdir, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer, type Harness } from '../../testing/harness.ts';
import { backends } from '../../testing/databases.ts';
import { sineWav } from '../../testing/audio.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { until } from '../../testing/until.ts';
import { portalUploadDir } from './portal-tus.ts';
import { PORTAL_FOLDER_NAME } from './portal-service.ts';
import { PORTAL_UPLOAD_IDLE_MS, sweepAbandonedPortalUploads } from './portal-sweeper.ts';
import { createPortalUpload, headUpload, patchUpload, serverOffset, startPortalUpload, streamedCreation, streamedPatch } from '../../testing/portal.ts';

const OWNER = 'artist@example.com';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function makePortal(h: Harness, upload: Schemas['UploadPortal'] = { enabled: true, header: 'Send us your stems' }, owner = OWNER, extra: Partial<Schemas['CreatePlayerRequest']> = {}) {
  const { api } = await h.as(owner);
  const { data, error } = await api.POST('/players', { body: { name: 'Stems', upload, ...extra } });
  if (!data) throw new Error(`player not made: ${JSON.stringify(error)}`);
  return data;
}

async function boxes(h: Harness, projectId: string, owner = OWNER): Promise<Schemas['Box'][]> {
  const { api } = await h.as(owner);
  const { data } = await api.GET('/projects/{projectid}/all', { params: { path: { projectid: projectId } } });
  return data!;
}

async function storedBytes(h: Harness, projectId: string, boxId: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of h.server.ctx.blobs.read(fileBlobKey(projectId, boxId))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What tus holds of uploads under way: nothing, when a refusal came before the upload existed. */
const portalFiles = async (h: Harness) => (await readdir(portalUploadDir(h.server.ctx.config.dataDir)).catch(() => [] as string[])).filter((name) => !name.endsWith('.json'));

describe.each(backends)('upload portal on %s', (backend) => {
  const h = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' });

  it('lands an upload in "Portal uploads" with its uploader, and analyses it', async () => {
    const player = await makePortal(h);
    const wav = await sineWav(2);
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: wav.length, filename: 'stem-bass.wav', filetype: 'audio/wav', name: 'Sam Rivera', email: 'sam@example.com' });
    expect(url).toMatch(new RegExp(`^${h.server.apiUrl}/portal/${player.id}/tus/pup_`));
    const res = await patchUpload(url, 0, wav);
    expect(res.status).toBe(204);
    expect(res.headers.get('upload-offset')).toBe(String(wav.length));

    const all = await boxes(h, player.projectid);
    const folder = all.find((box) => box.object === 'folder' && box.name === PORTAL_FOLDER_NAME)!;
    expect(folder).toBeDefined();
    const file = all.find((box): box is Schemas['FileBox'] => box.object === 'file' && box.name === 'stem-bass.wav')!;
    expect(file.uploader).toEqual({ name: 'Sam Rivera', email: 'sam@example.com' });
    const stack = all.find((box) => box.id === file.parentid)!;
    expect(stack).toMatchObject({ object: 'stack', parentid: folder.id });
    expect(sha256(await storedBytes(h, player.projectid, file.id))).toBe(sha256(wav));

    const { api } = await h.as(OWNER);
    const analysed = await until(async () => {
      const { data } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: player.projectid, fileid: file.id } } });
      return data?.object === 'file' && data.status === 'ready' && data;
    }, 'the portal upload to be analysed', 30_000);
    expect(analysed).toMatchObject({ duration: 2, uploader: { name: 'Sam Rivera' } });

    // A second upload goes into the same folder: it is made once.
    const again = await startPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: 'notes.txt', filetype: 'text/plain', name: 'Sam Rivera' });
    expect((await patchUpload(again, 0, Buffer.from('hey!'))).status).toBe(204);
    const folders = (await boxes(h, player.projectid)).filter((box) => box.object === 'folder' && box.name === PORTAL_FOLDER_NAME);
    expect(folders).toHaveLength(1);
    const notes = (await boxes(h, player.projectid)).find((box): box is Schemas['FileBox'] => box.object === 'file' && box.name === 'notes.txt')!;
    expect(notes).toMatchObject({ status: 'ready', uploader: { name: 'Sam Rivera' } });
    expect(notes.uploader!.email).toBeUndefined();
  });

  it('holds what arrives in the held "Portal uploads" folder, in no player, until a member moves it out', async () => {
    const { api } = await h.as(OWNER);
    const project = (await api.POST('/projects', { body: { name: 'Held' } })).data!;
    const folder = (await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: project.id } }, body: { name: 'Client drop' } })).data!;
    // The portal's own player, scoped to a folder; another player of the whole project; one listing boxes.
    const portal = await makePortal(h, { enabled: true }, OWNER, { projectid: project.id, folderid: folder.id, public: true });
    const whole = (await api.POST('/players', { body: { name: 'Everything', projectid: project.id, public: true } })).data!;
    const url = await startPortalUpload(h.server.apiUrl, portal.id, { size: 4, filename: 'brief.docx', filetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', name: 'Stranger' });
    expect((await patchUpload(url, 0, Buffer.from('PK!!'))).status).toBe(204);

    // The owner sees it through the API, with its uploader, in the held folder.
    let all = await boxes(h, project.id);
    const held = all.find((box): box is Schemas['FolderBox'] => box.object === 'folder' && box.name === PORTAL_FOLDER_NAME)!;
    expect(held).toMatchObject({ held: true });
    expect(held.parentid).toBeUndefined();
    const file = all.find((box): box is Schemas['FileBox'] => box.object === 'file' && box.name === 'brief.docx')!;
    expect(file).toMatchObject({ status: 'ready', uploader: { name: 'Stranger' } });
    const stack = all.find((box) => box.id === file.parentid)!;
    expect(stack).toMatchObject({ object: 'stack', parentid: held.id });
    expect(all.find((box) => box.id === folder.id)).toMatchObject({ children: [] });
    const listing = (await api.POST('/players', { body: { name: 'Listed', projectid: project.id, boxids: [stack.id, held.id], public: true } })).data!;
    const scopedToHeld = (await api.POST('/players', { body: { name: 'Held folder', projectid: project.id, folderid: held.id, public: true } })).data!;

    const shows = async (playerId: string) => {
      const res = await fetch(`${h.server.apiUrl}/players/${playerId}/view`);
      expect(res.status).toBe(200);
      return JSON.stringify(await res.json()).includes('brief.docx');
    };
    for (const player of [portal, whole, listing, scopedToHeld]) expect(await shows(player.id), player.name).toBe(false);

    // A member moves its stack out of the held folder: the players whose scope it is in now show it.
    const moved = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: project.id, fileid: folder.id } }, body: { addids: [stack.id] } });
    expect(moved.error).toBeUndefined();
    expect(await shows(portal.id)).toBe(true);
    expect(await shows(whole.id)).toBe(true);
    expect(await shows(listing.id)).toBe(true);
    expect(await shows(scopedToHeld.id)).toBe(false);
    // The next upload goes into the same held folder.
    const again = await startPortalUpload(h.server.apiUrl, portal.id, { size: 4, filename: 'notes.txt', filetype: 'text/plain', name: 'Stranger' });
    expect((await patchUpload(again, 0, Buffer.from('hey!'))).status).toBe(204);
    all = await boxes(h, project.id);
    const notes = all.find((box) => box.object === 'file' && box.name === 'notes.txt')!;
    expect(all.find((box) => box.id === notes.parentid)).toMatchObject({ parentid: held.id });
    expect(await shows(whole.id)).toBe(true);
  });

  it("resumes a PATCH cut mid-body from the server's offset, and stores the very bytes", async () => {
    const player = await makePortal(h);
    const wav = await sineWav(4);
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: wav.length, filename: 'mix.wav', filetype: 'audio/wav', name: 'Sam' });
    const uploadId = url.split('/').pop()!;
    const first = streamedPatch(url, 0, wav.length);
    await first.send(wav.subarray(0, 300_000));
    // Cut only once the server holds some of the bytes, so that there is something to resume from.
    const partial = join(portalUploadDir(h.server.ctx.config.dataDir), uploadId);
    await until(async () => (await stat(partial)).size >= 100_000, 'the first bytes to reach the server');
    first.cut();
    expect(await first.outcome).toHaveProperty('error');

    const offset = await until(async () => {
      const res = await headUpload(url);
      return res.status === 200 && Number(res.headers.get('upload-offset')) > 0 && Number(res.headers.get('upload-offset'));
    }, 'the server to settle the cut PATCH');
    expect(offset).toBeGreaterThanOrEqual(100_000);
    expect(offset).toBeLessThanOrEqual(300_000);
    // An offset other than the server's is refused (tus 1.0.0: 409), as a problem.
    const wrong = await patchUpload(url, 0, wav);
    expect(wrong.status).toBe(409);
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');
    expect(await serverOffset(url)).toBe(offset);

    const rest = await patchUpload(url, offset, wav.subarray(offset));
    expect(rest.status).toBe(204);
    const all = await boxes(h, player.projectid);
    const file = all.find((box) => box.object === 'file' && box.name === 'mix.wav')!;
    // Its stack is named as every upload's is: after the file without its extension.
    expect(all.find((box) => box.id === file.parentid)).toMatchObject({ object: 'stack', name: 'mix' });
    expect(sha256(await storedBytes(h, player.projectid, file.id))).toBe(sha256(wav));
    // The upload is done: its URL opens nothing more, and tus keeps no copy.
    expect((await headUpload(url)).status).toBe(404);
    expect(await portalFiles(h)).not.toContain(uploadId);
  });

  it('gives up an upload to which no byte came for a day: its partial bytes, its file and its room go; a fresh one stays', async () => {
    const player = await makePortal(h);
    const wav = await sineWav(1);
    const idleUrl = await startPortalUpload(h.server.apiUrl, player.id, { size: wav.length, filename: 'idle.wav', filetype: 'audio/wav', name: 'Sam' });
    const freshUrl = await startPortalUpload(h.server.apiUrl, player.id, { size: wav.length, filename: 'fresh.wav', filetype: 'audio/wav', name: 'Sam' });
    expect((await patchUpload(idleUrl, 0, wav.subarray(0, 1000))).status).toBe(204);
    expect((await patchUpload(freshUrl, 0, wav.subarray(0, 1000))).status).toBe(204);
    const idleId = idleUrl.split('/').pop()!;
    // A day and a minute ago, by its record and by its bytes.
    const then = Date.now() - PORTAL_UPLOAD_IDLE_MS - 60_000;
    await h.server.ctx.store.db.execute('UPDATE portal_uploads SET time_created = $2 WHERE id = $1', [idleId, then]);
    await utimes(join(portalUploadDir(h.server.ctx.config.dataDir), idleId), new Date(then), new Date(then));

    expect(await sweepAbandonedPortalUploads(h.server.ctx)).toBe(1);
    const names = (await boxes(h, player.projectid)).map((box) => box.name);
    expect(names).not.toContain('idle.wav');
    expect(names).toContain('fresh.wav');
    expect(await portalFiles(h)).not.toContain(idleId);
    expect((await headUpload(idleUrl)).status).toBe(404);
    expect(await serverOffset(freshUrl)).toBe(1000);
    expect(await h.server.ctx.store.portal.get(idleId)).toBeUndefined();
  });

  it('refuses at once when the owner closes the portal, an upload under way included', async () => {
    const player = await makePortal(h);
    const bytes = Buffer.alloc(2_000_000, 7);
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: bytes.length, filename: 'stems.zip', filetype: 'application/zip', name: 'Sam' });
    const uploadId = url.split('/').pop()!;
    const patch = streamedPatch(url, 0, bytes.length);
    await patch.send(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), bytes.subarray(4, 500_000)]));
    await until(async () => (await stat(join(portalUploadDir(h.server.ctx.config.dataDir), uploadId))).size > 0, 'the first bytes to reach the server');

    const { api } = await h.as(OWNER);
    const { data } = await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { upload: { enabled: false } } });
    expect(data?.upload).toEqual({ enabled: false, header: 'Send us your stems' });
    // The PATCH under way is cut within about a second (the portal is read again while it streams).
    const outcome = await Promise.race([patch.outcome, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(outcome).toHaveProperty('error');

    expect((await headUpload(url)).status).toBe(404);
    for (const res of [await patchUpload(url, 0, bytes), await createPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: 'a.txt', name: 'Sam' })]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect((await res.json()).detail).toMatch(/no open upload portal/);
    }
  });

  it('cuts a creation that carries the file when the owner closes the portal, and removes its partial bytes', async () => {
    const player = await makePortal(h);
    const size = 2_000_000;
    const post = streamedCreation(h.server.apiUrl, player.id, { size, filename: 'stems.zip', filetype: 'application/zip', name: 'Sam' });
    await post.send(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(500_000 - 4, 7)]));
    const uploadId = await until(async () => {
      const [row] = await h.server.ctx.store.db.query<{ id: string }>('SELECT id FROM portal_uploads WHERE player_id = $1', [player.id]);
      return row && (await stat(join(portalUploadDir(h.server.ctx.config.dataDir), row.id)).then((file) => file.size > 0, () => false)) && row.id;
    }, 'the first bytes of the creation to reach the server');

    const { api } = await h.as(OWNER);
    await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { upload: { enabled: false } } });
    const outcome = await Promise.race([post.outcome, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(outcome).toHaveProperty('error');
    // Its partial bytes, tus's record of them, the upload and its waiting file all go.
    await until(async () => !(await readdir(portalUploadDir(h.server.ctx.config.dataDir))).some((name) => name.startsWith(uploadId)), 'the partial bytes to be removed');
    expect(await h.server.ctx.store.portal.get(uploadId)).toBeUndefined();
    expect((await boxes(h, player.projectid)).some((box) => box.name === 'stems.zip')).toBe(false);
  });

  it('answers a missing, closed or expired portal like no portal at all', async () => {
    const closed = await makePortal(h, { enabled: false });
    const expired = await makePortal(h, { enabled: true }, OWNER, { expires: Date.now() + 60_000 });
    h.server.clock.advance(120_000);
    try {
      expect((await createPortalUpload(h.server.apiUrl, 'ply_nosuchplayer000000', { size: 4, filename: 'a.txt', name: 'Sam' })).status).toBe(404);
      expect((await createPortalUpload(h.server.apiUrl, closed.id, { size: 4, filename: 'a.txt', name: 'Sam' })).status).toBe(404);
      const gone = await createPortalUpload(h.server.apiUrl, expired.id, { size: 4, filename: 'a.txt', name: 'Sam' });
      expect(gone.status).toBe(410);
      expect((await gone.json()).type).toBe('/problems/player-expired');
    } finally {
      h.server.clock.advance(-120_000);
    }
  });
});

describe.each(backends)('upload portal limits on %s', (backend) => {
  const h = useTestServer(backend, {
    PORTAL_MAX_FILE_BYTES: '1000000',
    PORTAL_MAX_TOTAL_BYTES: '1500000',
    STORAGE_QUOTA_BYTES: '1200000',
    PORTAL_UPLOADS_PER_HOUR: '12',
  });

  /** A refusal before any byte: a problem, and neither a file in the project nor bytes with tus. */
  async function expectRefused(res: Response, status: number, type: string, detail: RegExp, projectId: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = await res.json();
    expect(problem).toMatchObject({ type, status });
    expect(problem.detail).toMatch(detail);
    expect((await boxes(h, projectId)).filter((box) => box.object === 'file')).toEqual([]);
    expect(await portalFiles(h)).toEqual([]);
    return problem;
  }

  it('refuses a file over the per-file limit', async () => {
    const player = await makePortal(h);
    const res = await createPortalUpload(h.server.apiUrl, player.id, { size: 1_000_001, filename: 'big.wav', filetype: 'audio/wav', name: 'Sam' });
    await expectRefused(res, 413, '/problems/payload-too-large', /over this portal's limit of 1000000 bytes per file/, player.projectid);
  });

  it('refuses what the portal does not take, and a missing name or a bad email', async () => {
    const player = await makePortal(h);
    const exe = await createPortalUpload(h.server.apiUrl, player.id, { size: 10, filename: 'setup.exe', filetype: 'application/x-msdownload', name: 'Sam' });
    await expectRefused(exe, 415, '/problems/unsupported-media-type', /not a kind of file this portal takes/, player.projectid);
    const anonymous = await createPortalUpload(h.server.apiUrl, player.id, { size: 10, filename: 'a.wav', filetype: 'audio/wav' });
    await expectRefused(anonymous, 400, '/problems/validation-error', /Type your name/, player.projectid);
    const email = await createPortalUpload(h.server.apiUrl, player.id, { size: 10, filename: 'a.wav', filetype: 'audio/wav', name: 'Sam', email: 'not an email' });
    await expectRefused(email, 400, '/problems/validation-error', /is not an email address/, player.projectid);
    const noVersion = await fetch(`${h.server.apiUrl}/portal/${player.id}/tus`, { method: 'POST', headers: { 'Upload-Length': '10' } });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get('tus-version')).toBe('1.0.0');
  });

  it("refuses bytes that are not the audio the file's type says, once they arrive", async () => {
    const player = await makePortal(h);
    const fake = Buffer.from('this is not a wav file at all, only text');
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: fake.length, filename: 'fake.wav', filetype: 'audio/wav', name: 'Sam' });
    const res = await patchUpload(url, 0, fake);
    expect(res.status).toBe(415);
    expect((await res.json()).detail).toMatch(/not audio/);
    expect((await boxes(h, player.projectid)).filter((box) => box.object === 'file')).toEqual([]);
    expect(await portalFiles(h)).toEqual([]);
  });

  it("refuses what would go over the portal's total", async () => {
    const player = await makePortal(h, { enabled: true }, 'total@example.com');
    const first = await startPortalUpload(h.server.apiUrl, player.id, { size: 900_000, filename: 'one.txt', filetype: 'text/plain', name: 'Sam' });
    expect((await patchUpload(first, 0, Buffer.alloc(900_000, 0x61))).status).toBe(204);
    const second = await createPortalUpload(h.server.apiUrl, player.id, { size: 700_000, filename: 'two.wav', filetype: 'audio/wav', name: 'Sam' });
    expect(second.status).toBe(413);
    expect((await second.json()).detail).toMatch(/This portal has room for 600000 more bytes/);
    const files = (await boxes(h, player.projectid, 'total@example.com')).filter((box) => box.object === 'file');
    expect(files.map((box) => box.name)).toEqual(['one.txt']);
  });

  it("refuses what would go over the owner's storage quota", async () => {
    const owner = 'quota@example.com';
    const player = await makePortal(h, { enabled: true }, owner);
    const { api } = await h.as(owner);
    const reserved = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: player.projectid } }, body: { name: 'own.wav', mimeType: 'audio/wav', size: 500_000 } });
    expect(reserved.data).toBeDefined();
    const res = await createPortalUpload(h.server.apiUrl, player.id, { size: 800_000, filename: 'big.wav', filetype: 'audio/wav', name: 'Sam' });
    expect(res.status).toBe(413);
    const problem = await res.json();
    expect(problem).toMatchObject({ type: '/problems/storage-quota-exceeded', quota: 1_200_000, used: 500_000 });
    expect((await boxes(h, player.projectid, owner)).filter((box) => box.object === 'file').map((box) => box.name)).toEqual(['own.wav']);
  });

  it('limits the uploads one address may start per hour', async () => {
    const player = await makePortal(h, { enabled: true }, 'rate@example.com');
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 13 && !refused; attempt++) {
      const res = await createPortalUpload(h.server.apiUrl, player.id, { size: 1, filename: `n${attempt}.txt`, filetype: 'text/plain', name: 'Sam' });
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(201);
    }
    expect(refused).toBeDefined();
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused!.json()).detail).toMatch(/Too many uploads from your address: at most 12 per hour/);
  });
});

describe.each(backends)('upload portal room on %s', (backend) => {
  const h = useTestServer(backend, {
    PORTAL_MAX_FILE_BYTES: '1000000',
    PORTAL_MAX_TOTAL_BYTES: '1500000',
    STORAGE_QUOTA_BYTES: '1200000',
    PORTAL_UPLOADS_PER_HOUR: '0',
    // A request that sends no byte for this long is cut, and gives back the room it claimed.
    UPLOAD_CLAIM_SECONDS: '2',
  });

  const ownUpload = async (owner: string, projectId: string, size: number) => {
    const { api } = await h.as(owner);
    return api.POST('/projects/{projectid}/files', { params: { path: { projectid: projectId } }, body: { name: `own-${size}.wav`, mimeType: 'audio/wav', size } });
  };

  it('takes room for bytes received only: declarations without bytes fill neither the portal nor the quota', async () => {
    const owner = 'declared@example.com';
    const player = await makePortal(h, { enabled: true }, owner);
    for (let n = 0; n < 10; n++) {
      expect((await createPortalUpload(h.server.apiUrl, player.id, { size: 900_000, filename: `big${n}.zip`, filetype: 'application/zip', name: 'Mallory' })).status).toBe(201);
    }
    // A real upload still goes in, and the owner's own uploads have their quota.
    const real = await startPortalUpload(h.server.apiUrl, player.id, { size: 1000, filename: 'brief.txt', filetype: 'text/plain', name: 'Sam' });
    expect((await patchUpload(real, 0, Buffer.alloc(1000, 0x61))).status).toBe(204);
    const own = await ownUpload(owner, player.projectid, 1_100_000);
    expect(own.error).toBeUndefined();
    // A declared length over the room left is still refused at creation.
    const over = await createPortalUpload(h.server.apiUrl, player.id, { size: 200_000, filename: 'over.zip', filetype: 'application/zip', name: 'Mallory' });
    expect(over.status).toBe(413);
    expect((await over.json()).type).toBe('/problems/storage-quota-exceeded');
  });

  it('refuses a PATCH that would overfill, before a byte, and takes one that fits', async () => {
    const owner = 'overfill@example.com';
    const player = await makePortal(h, { enabled: true }, owner);
    expect((await ownUpload(owner, player.projectid, 900_000)).error).toBeUndefined();
    // Each fits in the 300000 bytes left; both do not.
    const a = await startPortalUpload(h.server.apiUrl, player.id, { size: 250_000, filename: 'a.txt', filetype: 'text/plain', name: 'Sam' });
    const b = await startPortalUpload(h.server.apiUrl, player.id, { size: 250_000, filename: 'b.txt', filetype: 'text/plain', name: 'Sam' });
    expect((await patchUpload(a, 0, Buffer.alloc(250_000, 0x61))).status).toBe(204);
    const refused = await patchUpload(b, 0, Buffer.alloc(250_000, 0x62));
    expect(refused.status).toBe(413);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await refused.json()).toMatchObject({ type: '/problems/storage-quota-exceeded', quota: 1_200_000, used: 1_150_000 });
    expect(await serverOffset(b)).toBe(0);
    // What fits is taken.
    expect((await patchUpload(b, 0, Buffer.alloc(50_000, 0x62))).status).toBe(204);
    expect(await serverOffset(b)).toBe(50_000);
    expect((await patchUpload(b, 50_000, Buffer.alloc(1, 0x62))).status).toBe(413);
  });

  it('releases what unfinished uploads held when the portal is closed', async () => {
    const owner = 'closing@example.com';
    const player = await makePortal(h, { enabled: true }, owner);
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: 1_000_000, filename: 'half.txt', filetype: 'text/plain', name: 'Sam' });
    const uploadId = url.split('/').pop()!;
    expect((await patchUpload(url, 0, Buffer.alloc(600_000, 0x61))).status).toBe(204);
    // The 600000 bytes received take room.
    expect((await ownUpload(owner, player.projectid, 700_000)).response.status).toBe(413);

    const { api } = await h.as(owner);
    await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { upload: { enabled: false } } });
    expect(await h.server.ctx.store.portal.get(uploadId)).toBeUndefined();
    expect((await boxes(h, player.projectid, owner)).some((box) => box.name === 'half.txt')).toBe(false);
    expect(await portalFiles(h)).not.toContain(uploadId);
    expect((await ownUpload(owner, player.projectid, 700_000)).error).toBeUndefined();
  });

  it('cuts a PATCH that stops sending, and keeps only the room of the bytes it sent', async () => {
    const owner = 'stalled@example.com';
    const player = await makePortal(h, { enabled: true }, owner);
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: 1_000_000, filename: 'slow.txt', filetype: 'text/plain', name: 'Mallory' });
    const patch = streamedPatch(url, 0, 1_000_000);
    await patch.send(Buffer.alloc(1000, 0x61));
    // While it streams, the PATCH holds the room it announced.
    await until(async () => (await h.server.ctx.store.portal.get(url.split('/').pop()!))?.roomBytes === 1_000_000, 'the PATCH to claim its room');
    expect((await ownUpload(owner, player.projectid, 1_100_000)).response.status).toBe(413);
    // It sends nothing more: cut after UPLOAD_CLAIM_SECONDS, its 1000 bytes kept, the rest of its room free.
    const outcome = await Promise.race([patch.outcome, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
    expect(outcome).toHaveProperty('error');
    await until(async () => (await h.server.ctx.store.portal.get(url.split('/').pop()!))?.roomBytes === 1000, 'the room to be settled');
    expect(await serverOffset(url)).toBe(1000);
    expect((await ownUpload(owner, player.projectid, 1_100_000)).error).toBeUndefined();
  });
});
