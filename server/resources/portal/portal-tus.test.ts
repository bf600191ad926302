/**
 * The portal's tus protocol surface, on SQLite and PostgreSQL: the lock
 * (waiting for it costs nothing, a HEAD takes none), what OPTIONS
 * advertises, the API's request validation on the tus routes, and no
 * cross-origin access. Every wait polls a condition with a deadline.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer, type Harness } from '../../testing/harness.ts';
import { backends } from '../../testing/databases.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { until } from '../../testing/until.ts';
import { portalUploadDir } from './portal-tus.ts';
import { EventLocker } from '../tus/event-locker.ts';
import { createPortalUpload, headUpload, patchUpload, startPortalUpload, streamedPatch, tusEndpoint, uploadMetadata } from '../../testing/portal.ts';

const OWNER = 'artist@example.com';

async function makePortal(h: Harness, upload: Schemas['UploadPortal'] = { enabled: true }) {
  const { api } = await h.as(OWNER);
  const { data, error } = await api.POST('/players', { body: { name: 'Stems', upload } });
  if (!data) throw new Error(`player not made: ${JSON.stringify(error)}`);
  return data;
}

describe('EventLocker', () => {
  it('hands the lock to the first waiter on unlock, asks the holder to release, and lets an aborted waiter go', async () => {
    const locker = new EventLocker();
    const first = locker.newLock('pup_a');
    let asked = 0;
    await first.lock(new AbortController().signal, () => {
      asked++;
    });
    const order: string[] = [];
    const second = locker.newLock('pup_a');
    const secondTaken = second.lock(new AbortController().signal, () => {}).then(() => order.push('second'));
    const quitter = new AbortController();
    const third = locker.newLock('pup_a').lock(quitter.signal, () => {});
    await until(() => locker.waiting('pup_a') === 2 && asked === 2, 'both waiters to queue and ask the holder');
    quitter.abort();
    await expect(third).rejects.toMatchObject({ status_code: 400 });
    expect(locker.waiting('pup_a')).toBe(1);
    expect(order).toEqual([]);
    await first.unlock();
    await secondTaken;
    expect(order).toEqual(['second']);
    // Another upload's lock is its own.
    await locker.newLock('pup_b').lock(new AbortController().signal, () => {});
    await second.unlock();
    await locker.newLock('pup_a').lock(new AbortController().signal, () => {});
  });

  it('gives up after its timeout', async () => {
    const locker = new EventLocker({ acquireLockTimeoutMs: 50 });
    await locker.newLock('pup_a').lock(new AbortController().signal, () => {});
    await expect(locker.newLock('pup_a').lock(new AbortController().signal, () => {})).rejects.toMatchObject({ status_code: 500 });
    expect(locker.waiting('pup_a')).toBe(0);
  });
});

describe.each(backends)('portal tus protocol on %s', (backend) => {
  const h = useTestServer(backend);

  it('answers 80 HEADs during a slow PATCH at once, for next to no CPU, and leaves the PATCH running', async () => {
    const player = await makePortal(h);
    const size = 1_000_000;
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size, filename: 'stems.zip', filetype: 'application/zip', name: 'Sam' });
    const uploadId = url.split('/').pop()!;
    const patch = streamedPatch(url, 0, size);
    const head = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(100_000 - 4, 1)]);
    await patch.send(head);
    await until(async () => (await stat(join(portalUploadDir(h.server.ctx.config.dataDir), uploadId))).size === head.length, 'the first bytes to reach the server');

    // The same requests to an idle upload first, so that what is measured is the lock, not the first run of the code.
    const idle = await startPortalUpload(h.server.apiUrl, player.id, { size: 10, filename: 'notes.txt', filetype: 'text/plain', name: 'Sam' });
    await Promise.all(Array.from({ length: 80 }, () => headUpload(idle)));
    const before = process.cpuUsage();
    const answers = await Promise.all(Array.from({ length: 80 }, () => headUpload(url)));
    const used = process.cpuUsage(before);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('upload-offset')).toBe(String(head.length));
    }
    // Today's @tus/server locker spins a setImmediate loop per waiter: seconds of CPU. Generous: 80 requests cost far less than this.
    expect((used.user + used.system) / 1e6).toBeLessThan(0.5);

    // The PATCH was not asked to let go: the rest of the file completes it.
    await patch.send(Buffer.alloc(size - head.length, 2));
    patch.end();
    expect(await patch.outcome).toMatchObject({ status: 204 });
  });

  it('advertises only the tus extensions it supports', async () => {
    const player = await makePortal(h);
    const res = await fetch(tusEndpoint(h.server.apiUrl, player.id), { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination');
  });

  it('sends no CORS headers, to a preflight or a request from another origin', async () => {
    const player = await makePortal(h);
    const origin = { Origin: 'https://evil.example' };
    const preflight = await fetch(tusEndpoint(h.server.apiUrl, player.id), {
      method: 'OPTIONS',
      headers: { ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'tus-resumable,upload-length,upload-metadata' },
    });
    const created = await fetch(tusEndpoint(h.server.apiUrl, player.id), {
      method: 'POST',
      headers: { ...origin, 'Tus-Resumable': '1.0.0', 'Upload-Length': '4', 'Upload-Metadata': uploadMetadata({ filename: 'a.txt', filetype: 'text/plain', name: 'Sam' }) },
    });
    expect(created.status).toBe(201);
    const head = await fetch(created.headers.get('location')!, { method: 'HEAD', headers: { ...origin, 'Tus-Resumable': '1.0.0' } });
    expect(head.status).toBe(200);
    const refused = await fetch(tusEndpoint(h.server.apiUrl, player.id), { method: 'POST', headers: origin });
    expect(refused.status).toBe(412);
    for (const res of [preflight, created, head, refused]) {
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    // The rest of the API still allows any origin.
    expect((await fetch(`${h.server.apiUrl}/players`, { headers: origin })).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('removes bidi controls from the file name and the uploader', async () => {
    const player = await makePortal(h);
    const bidi = '\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C';
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: `notes\u202Etxt.exe${bidi}.txt`, filetype: 'text/plain', name: `Sam\u202E Rivera${bidi}`, email: `\u200Fsam@example.com` });
    expect((await patchUpload(url, 0, Buffer.from('hey!'))).status).toBe(204);
    const { api } = await h.as(OWNER);
    const all = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid: player.projectid } } })).data!;
    const file = all.find((box): box is Schemas['FileBox'] => box.object === 'file')!;
    expect(file.name).toBe('notestxt.exe.txt');
    expect(file.uploader).toEqual({ name: 'Sam Rivera', email: 'sam@example.com' });
    // A name of bidi controls alone is no name.
    const empty = await createPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: 'a.txt', filetype: 'text/plain', name: '\u202E\u200F' });
    expect(empty.status).toBe(400);
    expect((await empty.json()).detail).toMatch(/Type your name/);
  });

  it('refuses a query parameter on every tus operation with a problem, before doing anything', async () => {
    const player = await makePortal(h);
    const endpoint = tusEndpoint(h.server.apiUrl, player.id);
    const expectUnknownQuery = async (res: Response, name: string) => {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = await res.json();
      expect(problem).toMatchObject({ type: '/problems/validation-error', status: 400, errors: [expect.objectContaining({ parameter: name })] });
      expect(problem.detail).toMatch(new RegExp(`Unknown query parameter '${name}'`));
    };
    const metadata = uploadMetadata({ filename: 'a.txt', filetype: 'text/plain', name: 'Sam' });
    await expectUnknownQuery(await fetch(`${endpoint}?debug=1`, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '4', 'Upload-Metadata': metadata } }), 'debug');
    await expectUnknownQuery(await fetch(`${endpoint}?x`, { method: 'OPTIONS' }), 'x');
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: 'a.txt', filetype: 'text/plain', name: 'Sam' });
    // A HEAD answer has no body (RFC 9110 §9.3.2): its status and type tell.
    const head = await fetch(`${url}?x=1`, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
    expect(head.status).toBe(400);
    expect(head.headers.get('content-type')).toContain('application/problem+json');
    await expectUnknownQuery(
      await fetch(`${url}?offset=0`, { method: 'PATCH', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, body: 'hey!' }),
      'offset',
    );
    await expectUnknownQuery(await fetch(`${url}?force=true`, { method: 'DELETE', headers: { 'Tus-Resumable': '1.0.0' } }), 'force');
    // Nothing was done: the upload is still there, with no byte.
    const after = await headUpload(url);
    expect(after.status).toBe(200);
    expect(after.headers.get('upload-offset')).toBe('0');
  });

  it('refuses a malformed Upload-Metadata, and the headers of extensions it lacks, with a problem that says what to fix', async () => {
    const player = await makePortal(h);
    const endpoint = tusEndpoint(h.server.apiUrl, player.id);
    const post = (headers: Record<string, string>) => fetch(endpoint, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '4', ...headers } });
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      // Base64 not padded to a multiple of 4 ("a" alone): @tus/server refused it as text/plain.
      [{ 'Upload-Metadata': 'filename YS50eHQ=,name U2Ft,filetype a' }, 'upload-metadata', /value of "filetype" must be Base64/],
      [{ 'Upload-Metadata': 'filename YS50eHQ=,name U2Ft,name U2Ft' }, 'upload-metadata', /"name" is given twice/],
      [{ 'Upload-Metadata': 'filename YS50eHQ=,nämé U2Ft' }, 'upload-metadata', /must be ASCII/],
      [{ 'Upload-Metadata': 'filename YS50eHQ=,,name U2Ft' }, 'upload-metadata', /empty pair/],
      [{ 'Upload-Metadata': uploadMetadata({ filename: 'a.txt', name: 'Sam' }), 'Upload-Defer-Length': '1' }, 'upload-defer-length', /not taken/],
      [{ 'Upload-Metadata': uploadMetadata({ filename: 'a.txt', name: 'Sam' }), 'X-Forwarded-Proto': 'gopher' }, 'x-forwarded-proto', /http or https/],
    ];
    for (const [headers, header, detail] of cases) {
      const res = await post(headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = await res.json();
      expect(problem.errors).toContainEqual({ header, detail: expect.stringMatching(detail) });
      expect(problem.detail).toMatch(detail);
    }
    // On a PATCH, what only a creation declares is refused as a problem, not by tus (a 501 there, or its plain-text 400).
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size: 4, filename: 'a.txt', filetype: 'text/plain', name: 'Sam' });
    for (const headers of [{ 'Upload-Length': '4' }, { 'Upload-Metadata': 'filename a' }] as Array<Record<string, string>>) {
      const res = await fetch(url, { method: 'PATCH', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', ...headers }, body: 'hey!' });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await headUpload(url)).headers.get('upload-offset')).toBe('0');
  });
});

