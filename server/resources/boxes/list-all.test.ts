import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { createApiClient, type ApiClient } from '../../../generated/client.ts';
import { wholeListingReference } from './whole-listing-reference.ts';


async function projectOfTracks(api: ApiClient, tracks: number) {
  const { data: project } = await api.POST('/projects', { body: { name: 'All' } });
  const files: string[] = [];
  for (let i = 0; i < tracks; i++) {
    const { data } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: `take-${i}.wav`, mimeType: 'audio/wav', size: 1000 } });
    files.push(data!.boxid);
  }
  return { projectid: project!.id, files };
}

describe.each(backends)('List all files without response validation, on %s', (backend) => {
  // The response validator checks what res.json is given; without it the listing's bytes go out as they are kept.
  const t = useTestServer(backend, { VALIDATE_RESPONSES: 'false' });

  it('sends the bytes and headers res.json sent, before and right after each write', async () => {
    const { api, token } = await t.as('all@example.com');
    const { projectid, files } = await projectOfTracks(api, 4);
    const expectWhole = async () => {
      const response = await t.fetch(`/projects/${projectid}/all`, { token });
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('content-length')).toBe(String(body.length));
      expect(body.toString('utf8')).toBe(await wholeListingReference(t.server.ctx.store, projectid));
      return body.toString('utf8');
    };
    await expectWhole();
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: files[1] } }, body: { name: 'renamed ✓ "take".wav' } });
    expect(await expectWhole()).toContain('renamed ✓ \\"take\\".wav');
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Hidden soon' } });
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: folder!.id } }, body: { addids: [files[2]], hidden: true } });
    expect(await expectWhole()).not.toContain(folder!.id.concat('","name":"Hidden soon'));
    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: files[3] } } });
    expect(await expectWhole()).not.toContain(files[3]);
    // Pages are cut from the same list.
    const page = await t.fetch(`/projects/${projectid}/all?limit=2`, { token });
    expect(JSON.stringify(await page.json())).toBe(JSON.stringify(JSON.parse(await wholeListingReference(t.server.ctx.store, projectid)).slice(0, 2)));
  });
});

describe('List all files from two API servers, each with its own cache, on one PostgreSQL database (as deploy/cluster runs them)', () => {
  // Every server on one database has the same signing secret (deploy/README.md, "One signing secret").
  const shared = { VALIDATE_RESPONSES: 'false', SIGNING_SECRET: 'the signing secret both processes of this test share' };
  const t = useTestServer('postgres', shared);
  let other: TestServer;
  beforeAll(async () => {
    other = await startTestServer('postgres', { ...shared, DATABASE_URL: t.server.ctx.config.databaseUrl! });
  });
  afterAll(async () => {
    await other?.stop();
  });

  it("never serves one server's listing once the other has written", async () => {
    const { api, token } = await t.as('cluster-all@example.com');
    const otherApi = createApiClient({ baseUrl: other.apiUrl, token });
    const { projectid, files } = await projectOfTracks(api, 3);
    const listed = async (server: { apiUrl: string }) => (await fetch(`${server.apiUrl}/projects/${projectid}/all`, { headers: { Authorization: `Bearer ${token}` } })).text();
    const before = await listed(t.server);
    expect(await listed(t.server)).toBe(before);
    await otherApi.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: files[0] } }, body: { name: 'renamed by the other server.wav' } });
    const after = await listed(t.server);
    expect(after).toContain('renamed by the other server.wav');
    expect(after).toBe(await listed(other));
    await otherApi.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Made by the other server' } });
    expect(await listed(t.server)).toContain('Made by the other server');
    expect(await listed(t.server)).toBe(await wholeListingReference(t.server.ctx.store, projectid));
  });
});
