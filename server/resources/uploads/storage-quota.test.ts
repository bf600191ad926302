/**
 * The storage quota per account: checked before an upload URL is
 * issued, for files and artwork, against the bytes of the projects the
 * account owns, reservations of URLs not used yet included; refused with a
 * 413 storage-quota-exceeded problem that says where the account stands,
 * and nothing reserved. None by default.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

describe.each(backends)('the storage quota on %s', (backend) => {
  const t = useTestServer(backend, { STORAGE_QUOTA_BYTES: '1000' });

  it('issues upload URLs while the account has room, counting unused URLs too, refuses one that would go over with 413 and stores nothing, and frees room when a file goes', async () => {
    const { api } = await t.as('quota@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Quota' } });
    const projectid = project!.id;
    const { data: stored, error } = await api.uploadFile(projectid, { name: 'a.bin', mimeType: 'application/octet-stream' }, new Uint8Array(600));
    expect(error).toBeUndefined();
    // A URL not used yet reserves its room.
    const reserved = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'b.bin', mimeType: 'application/octet-stream', size: 300 } });
    expect(reserved.response.status).toBe(200);
    const boxesBefore = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!.length;

    const refused = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'c.bin', mimeType: 'application/octet-stream', size: 101 } });
    expect(refused.response.status).toBe(413);
    expect(refused.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.error).toMatchObject({ type: '/problems/storage-quota-exceeded', quota: 1000, used: 900 });
    expect((await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!.length).toBe(boxesBefore);
    // Artwork counts against the same quota.
    const artwork = await api.POST('/projects/{projectid}/artwork', { params: { path: { projectid } }, body: { name: 'cover.png', mimeType: 'image/png', size: 200 } });
    expect(artwork.response.status).toBe(413);
    // Exactly up to the quota is allowed.
    expect((await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'd.bin', mimeType: 'application/octet-stream', size: 100 } })).response.status).toBe(200);

    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: stored!.box.id } } });
    expect((await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'e.bin', mimeType: 'application/octet-stream', size: 600 } })).response.status).toBe(200);
  });

  it("counts each account's own projects only", async () => {
    const { api } = await t.as('other-account@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Elsewhere' } });
    const { response } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: 'f.bin', mimeType: 'application/octet-stream', size: 1000 } });
    expect(response.status).toBe(200);
  });
});

describe('the storage quota setting', () => {
  // A signing secret given, so that loading the configuration writes nothing to DATA_DIR.
  const base = { DATA_DIR: '/nonexistent/quota-test', SIGNING_SECRET: 'a-signing-secret-of-at-least-32-characters' };
  it('is none by default, and takes a whole number of bytes', () => {
    expect(loadConfig(base).storageQuotaBytes).toBeUndefined();
    expect(loadConfig({ ...base, STORAGE_QUOTA_BYTES: '10737418240' }).storageQuotaBytes).toBe(10737418240);
    expect(() => loadConfig({ ...base, STORAGE_QUOTA_BYTES: '10GB' })).toThrow('STORAGE_QUOTA_BYTES');
  });
});
