/**
 * Resumable uploads of project members (extension): tus 1.0.0 under
 * /projects/{projectid}/tus, with the caller's token and the headers the
 * spec documents. The client follows the `Location` the creation answers,
 * as tus clients do (it leads back to the target on the mock too). On a real
 * server, a file is sent in two PATCHes, as a client resuming after a cut
 * would: it waits in the project from the creation on (`Upload-File-Id`
 * names it), then is there with its very bytes, and a HEAD after completion
 * still names it. Uploads are cancelled, refused without a credential, at a
 * stale offset and past their length. The mock keeps no state: there the
 * examples' ids are used, statuses and headers are checked, and what needs
 * stored state is skipped.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../generated/client.ts';
import { uploadMetadata } from '../server/testing/portal.ts';
import { baseUrl, checkedFetch, client, fetchSigned, onMock, raw, token } from './support/context.ts';
import { expectValidationRefusals, problemOf } from './support/problems.ts';

const api = client();
const tus = { 'Tus-Resumable': '1.0.0' };
const bearer = { Authorization: `Bearer ${token}` };
const tooLongId = 'x'.repeat(65);
/** The examples' ids, which the mock answers for; replaced by real ones on a server. */
const ids = { projectid: 'prj_7h2kq9xw4m', uploadid: 'tup_7k2m9q4w1x3c5v8b' };

/** Every byte value, then some text: they must arrive as sent. */
const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)), Buffer.from('\r\n\0contract resumable upload\n')]);

const uploadsPath = (projectid = ids.projectid) => `/projects/${projectid}/tus`;
const values = (header: string | null) => (header ?? '').split(',').map((value) => value.trim());

function creation(filename: string, size: number | string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...tus, 'Upload-Length': String(size), 'Upload-Metadata': uploadMetadata({ filename, filetype: 'application/octet-stream', ...extra }) };
}

const create = (headers: Record<string, string>, projectid = ids.projectid, withToken: string | null | undefined = undefined) =>
  raw(uploadsPath(projectid), { method: 'POST', headers, token: withToken });
const capabilities = (projectid = ids.projectid) => raw(uploadsPath(projectid), { method: 'OPTIONS', token: null });
const head = (url: string, headers: Record<string, string> = { ...tus, ...bearer }) => checkedFetch(url, { method: 'HEAD', headers });
const append = (url: string, offset: number | string, body: Uint8Array, headers: Record<string, string> = { ...tus, ...bearer }) =>
  checkedFetch(url, { method: 'PATCH', headers: { ...headers, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }, body: new Uint8Array(body) });
const cancel = (url: string, headers: Record<string, string> = { ...tus, ...bearer }) => checkedFetch(url, { method: 'DELETE', headers });

async function start(filename: string, size: number): Promise<{ url: string; fileid: string }> {
  const created = await create(creation(filename, size));
  expect(created.status).toBe(201);
  expect(created.headers.get('tus-resumable')).toBe('1.0.0');
  const url = created.headers.get('location') ?? '';
  expect(url.startsWith(`${baseUrl}${uploadsPath()}/`)).toBe(true);
  expect(url.split('/').pop()).toMatch(/^tup_[0-9a-z]{16}$/);
  const fileid = created.headers.get('upload-file-id') ?? '';
  expect(fileid).not.toBe('');
  return { url, fileid };
}

async function fileOf(fileid: string) {
  const { data, response } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: ids.projectid, fileid } } });
  return { data: data as Schemas['FileBox'] | undefined, status: response.status };
}

beforeAll(async () => {
  if (onMock) return;
  const { data, error } = await api.POST('/projects', { body: { name: 'Contract: resumable uploads' } });
  expect(error).toBeUndefined();
  ids.projectid = data!.id;
});

describe('resumable uploads of project members (extension)', () => {
  it('getProjectUploadCapabilities, valid: tus 1.0.0, with creation and termination', async () => {
    const res = await capabilities();
    expect(res.status).toBe(204);
    expect(values(res.headers.get('tus-version'))).toContain('1.0.0');
    expect(values(res.headers.get('tus-extension'))).toEqual(expect.arrayContaining(['creation', 'creation-with-upload', 'termination']));
  });

  it('createProjectUpload, getProjectUploadOffset and appendProjectUpload, each valid: a file sent in two parts waits in the project, then is there with its very bytes', async () => {
    const { url, fileid } = await start('take.bin', bytes.length);
    const fresh = await head(url);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('cache-control')).toBe('no-store');
    expect(fresh.headers.get('upload-offset')).toMatch(/^\d+$/);
    if (!onMock) {
      expect(fresh.headers.get('upload-offset')).toBe('0');
      expect(fresh.headers.get('upload-file-id')).toBe(fileid);
      expect((await fileOf(fileid)).data).toMatchObject({ status: 'awaiting-upload', size: bytes.length, name: 'take.bin' });
    }
    const half = 100;
    const first = await append(url, 0, bytes.subarray(0, half));
    expect(first.status).toBe(204);
    expect(first.headers.get('tus-resumable')).toBe('1.0.0');
    if (!onMock) {
      expect(first.headers.get('upload-offset')).toBe(String(half));
      expect((await head(url)).headers.get('upload-offset')).toBe(String(half));
    }
    const rest = await append(url, half, bytes.subarray(half));
    expect(rest.status).toBe(204);
    if (onMock) return;
    expect(rest.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(rest.headers.get('upload-file-id')).toBe(fileid);
    expect((await fileOf(fileid)).data).toMatchObject({ status: 'ready', size: bytes.length });
    const { data: download } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: ids.projectid, fileid } } });
    const served = await fetchSigned(download!.url);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes);
    // Complete: a HEAD says there is nothing left to send, and names the file; nothing more is taken.
    const done = await head(url);
    expect(done.status).toBe(200);
    expect(done.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(done.headers.get('upload-file-id')).toBe(fileid);
    expect((await append(url, bytes.length, Buffer.from('more'))).status).toBe(404);
    expect((await cancel(url)).status).toBe(404);
  });

  it("cancelProjectUpload, valid: the upload's bytes and its waiting file go, and its URL answers 404", async () => {
    const { url, fileid } = await start('cancelled.bin', 10);
    expect((await append(url, 0, Buffer.from('half'))).status).toBe(204);
    const cancelled = await cancel(url);
    expect(cancelled.status).toBe(204);
    expect(cancelled.headers.get('tus-resumable')).toBe('1.0.0');
    if (onMock) return;
    expect((await head(url)).status).toBe(404);
    expect((await append(url, 4, Buffer.from('rest!!'))).status).toBe(404);
    expect((await fileOf(fileid)).status).toBe(404);
  });

  it('refuses a request without the Tus-Resumable the server speaks with 412 and Tus-Version, and one without a credential with 401', async () => {
    const { url } = await start('version.bin', 4);
    const { 'Tus-Resumable': _, ...unversioned } = creation('unversioned.bin', 4);
    const refusals = {
      createProjectUpload: await create(unversioned),
      getProjectUploadOffset: await head(url, bearer),
      appendProjectUpload: await append(url, 0, Buffer.from('four'), bearer),
      cancelProjectUpload: await cancel(url, bearer),
    };
    for (const [call, res] of Object.entries(refusals)) {
      expect(res.status, call).toBe(412);
      expect(values(res.headers.get('tus-version')), call).toContain('1.0.0');
    }
    expect(await problemOf(refusals.createProjectUpload)).toMatchObject({ type: '/problems/precondition-failed', errors: [{ header: 'tus-resumable' }] });
    const anonymous = {
      createProjectUpload: await create(creation('anonymous.bin', 4), ids.projectid, null),
      getProjectUploadOffset: await head(url, tus),
      appendProjectUpload: await append(url, 0, Buffer.from('four'), tus),
      cancelProjectUpload: await cancel(url, tus),
    };
    for (const [call, res] of Object.entries(anonymous)) expect(res.status, call).toBe(401);
    if (onMock) return;
    expect((await head(url)).headers.get('upload-offset')).toBe('0');
  });

  it('refuses malformed requests with 400, naming the offending header or path id', async () => {
    const upload = `${baseUrl}${uploadsPath()}/${ids.uploadid}`;
    const { 'Upload-Length': _, ...unsized } = creation('unsized.bin', 4);
    const refusals: Parameters<typeof expectValidationRefusals>[0] = [
      ['createProjectUpload without Upload-Length', create(unsized), { header: 'upload-length' }],
      ['createProjectUpload without Upload-Metadata', create({ ...tus, 'Upload-Length': '4' }), { header: 'upload-metadata' }],
      ['appendProjectUpload with a malformed Upload-Offset', append(upload, 'zero', Buffer.from('four')), { header: 'upload-offset' }],
      ['cancelProjectUpload of a malformed upload id', cancel(`${baseUrl}${uploadsPath()}/not-an-upload-id`), { parameter: 'projectuploadid' }],
      ['getProjectUploadCapabilities of a project id over 64 characters', capabilities(tooLongId), { parameter: 'projectid' }],
    ];
    await expectValidationRefusals(refusals);
    expect((await head(`${baseUrl}${uploadsPath()}/not-an-upload-id`)).status).toBe(400);
  });

  it.skipIf(onMock)(
    "appendProjectUpload refuses an offset other than the server's (409) and bytes past the declared length (413); createProjectUpload a length over the limit (413) and a parentid that is a file (409) (needs stored state: skipped on the mock)",
    async () => {
      const text = Buffer.from('0123456789');
      const { url, fileid } = await start('offsets.bin', text.length);
      expect((await append(url, 0, text.subarray(0, 4))).status).toBe(204);
      const stale = await append(url, 0, text);
      expect(stale.status).toBe(409);
      expect(await problemOf(stale)).toMatchObject({ type: '/problems/conflict' });
      const tooLong = await append(url, 4, Buffer.from('456789 and then some'));
      expect(tooLong.status).toBe(413);
      expect((await head(url)).headers.get('upload-offset')).toBe('4');
      expect((await append(url, 4, text.subarray(4))).status).toBe(204);

      const huge = await create(creation('huge.bin', '1000000000000000'));
      expect(huge.status).toBe(413);
      expect(await problemOf(huge)).toMatchObject({ type: '/problems/payload-too-large' });
      const intoFile = await create(creation('into-a-file.bin', 4, { parentid: fileid }));
      expect(intoFile.status).toBe(409);
      expect(await problemOf(intoFile)).toMatchObject({ type: '/problems/conflict' });
      const elsewhere = await create(creation('nowhere.bin', 4), 'prj_nosuchproject0');
      expect(elsewhere.status).toBe(404);
    },
  );
});
