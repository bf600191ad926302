/**
 * What the studio's library needs of projects (the studio's rules): deleting one with
 * everything in it, the projects shared with me, each project's size and
 * last change, and the storage an account uses against its quota.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { artworkBlobKey, fileBlobKey } from '../../blobs/keys.ts';
import { portalUploadDir } from '../../blobs/partial-uploads.ts';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const QUOTA = 1_000_000;

describe.each(backends)('projects for the studio on %s', (backend) => {
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true', STORAGE_QUOTA_BYTES: String(QUOTA) });
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('deletes a project with its boxes, bytes, artwork, players, comments and pending uploads, for its owner only, and tells its webhooks', async () => {
    const owner = await t.as(`deleter-${backend}@example.com`);
    const { data: project } = await owner.api.POST('/projects', { body: { name: 'Doomed' } });
    const projectid = project!.id;
    const path = { params: { path: { projectid } } };
    const { upload } = (await owner.api.uploadFile(projectid, { name: 'Song.wav', mimeType: 'audio/wav' }, bytes('the song'))).data!;
    const pending = (await owner.api.POST('/projects/{projectid}/files', { ...path, body: { name: 'Later.wav', mimeType: 'audio/wav', size: 5 } })).data!;
    expect((await owner.api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, PNG)).error).toBeUndefined();
    const { data: player } = await owner.api.POST('/players', {
      body: { name: 'Share', projectid, collaborators: [{ email: `editor-${backend}@example.com`, role: 'editor' }] },
    });
    const comment = await owner.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid: upload.boxid } }, body: { message: 'Nice' } });
    expect(comment.response.status).toBe(200);
    const { data: hook } = await owner.api.POST('/webhooks', { body: { label: 'deletions', url: 'http://127.0.0.1:9/hook', events: ['project.deleted'] } });
    // A portal upload under way: its row, and the partial bytes tus keeps outside the blob store.
    const db = t.server.ctx.store.db;
    const portalId = `pup_${backend.padEnd(16, '0').slice(0, 16)}`;
    await db.execute('INSERT INTO portal_uploads (id, player_id, project_id, box_id, size, time_created) VALUES ($1, $2, $3, $4, $5, $6)', [
      portalId, player!.id, projectid, pending.boxid, 5, Date.now(),
    ]);
    const directory = portalUploadDir(t.server.ctx.config.dataDir);
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, portalId), 'par');
    writeFileSync(join(directory, `${portalId}.json`), '{}');

    const blobs = t.server.ctx.blobs;
    expect(await blobs.stat(fileBlobKey(projectid, upload.boxid))).toBeDefined();
    const [{ id: artworkId }] = await db.query<{ id: string }>('SELECT id FROM artworks WHERE project_id = $1', [projectid]);
    expect(await blobs.stat(artworkBlobKey(projectid, artworkId))).toBeDefined();
    const editor = await t.as(`editor-${backend}@example.com`);
    const stranger = await t.as(`stranger-${backend}@example.com`);
    const refused = await editor.api.DELETE('/projects/{projectid}', path);
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ type: '/problems/forbidden' });
    expect(refused.error!.detail).toContain('Only the owner');
    expect((await stranger.api.DELETE('/projects/{projectid}', path)).response.status).toBe(404);
    expect((await owner.api.GET('/projects/{projectid}', path)).response.status).toBe(200);

    const deleted = await owner.api.DELETE('/projects/{projectid}', path);
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toEqual({});
    expect((await owner.api.GET('/projects/{projectid}', path)).response.status).toBe(404);
    expect((await owner.api.GET('/players/{playerid}', { params: { path: { playerid: player!.id } } })).response.status).toBe(404);
    expect((await owner.api.DELETE('/projects/{projectid}', path)).response.status).toBe(404);
    expect((await owner.api.GET('/projects')).data!.map((item) => item.id)).not.toContain(projectid);
    expect(await blobs.stat(fileBlobKey(projectid, upload.boxid))).toBeUndefined();
    expect(await blobs.stat(artworkBlobKey(projectid, artworkId))).toBeUndefined();
    const left: string[] = [];
    for await (const key of blobs.list(`projects/${projectid}/`)) left.push(key);
    expect(left).toEqual([]);
    for (const [table, column] of [['boxes', 'project_id'], ['uploads', 'project_id'], ['players', 'project_id'], ['portal_uploads', 'project_id'], ['artworks', 'project_id']]) {
      const [row] = await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = $1`, [projectid]);
      expect(Number(row.n), table).toBe(0);
    }
    const [jobs] = await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM jobs WHERE payload LIKE $1`, [`%${projectid}%`]);
    expect(Number(jobs.n)).toBe(0);
    const [comments] = await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM comments WHERE file_id = $1', [upload.boxid]);
    expect(Number(comments.n)).toBe(0);
    expect(existsSync(join(directory, portalId))).toBe(false);
    expect(existsSync(join(directory, `${portalId}.json`))).toBe(false);
    const deliveries = await db.query<{ type: string; body: string }>('SELECT type, body FROM webhook_deliveries WHERE webhook_id = $1', [hook!.id]);
    expect(deliveries.map((delivery) => delivery.type)).toEqual(['project.deleted']);
    expect(JSON.parse(deliveries[0].body)).toMatchObject({ type: 'project.deleted', projectid, data: { id: projectid, name: 'Doomed', role: 'owner' } });
  });

  it('lists all, mine or shared projects, each with its size and its last change, the default being all', async () => {
    const me = await t.as(`lister-${backend}@example.com`);
    const other = await t.as(`sharer-${backend}@example.com`);
    const { data: mine } = await me.api.POST('/projects', { body: { name: 'Mine' } });
    const { data: theirs } = await other.api.POST('/projects', { body: { name: 'Theirs' } });
    const { data: unshared } = await other.api.POST('/projects', { body: { name: 'Not shared' } });
    await other.api.POST('/players', { body: { name: 'For you', projectid: theirs!.id, collaborators: [{ email: `lister-${backend}@example.com`, role: 'viewer' }] } });
    const ids = async (filter?: 'all' | 'mine' | 'shared') =>
      (await me.api.GET('/projects', { params: { query: filter ? { filter } : {} } })).data!.map((project) => `${project.name}:${project.role}`);
    expect(await ids()).toEqual(['Theirs:viewer', 'Mine:owner']);
    expect(await ids('all')).toEqual(['Theirs:viewer', 'Mine:owner']);
    expect(await ids('mine')).toEqual(['Mine:owner']);
    expect(await ids('shared')).toEqual(['Theirs:viewer']);
    expect(await ids('shared')).not.toContain(`${unshared!.name}:viewer`);
    const refused = await t.fetch('/projects?filter=everything', { token: me.token });
    expect(refused.status).toBe(400);

    // Size: the bytes of files that arrived and are not trashed; the last change: of the project or of any box.
    const projectid = mine!.id;
    expect(mine).toMatchObject({ size: 0, timeModified: mine!.timeCreated });
    const a = (await me.api.uploadFile(projectid, { name: 'A.wav', mimeType: 'audio/wav' }, bytes('1234567'))).data!;
    await me.api.uploadFile(projectid, { name: 'B.wav', mimeType: 'audio/wav' }, bytes('123'));
    await me.api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'Waiting.wav', mimeType: 'audio/wav', size: 1000 } });
    const listed = async () => (await me.api.GET('/projects', { params: { query: { filter: 'mine' } } })).data![0];
    expect((await listed()).size).toBe(10);
    t.server.clock.advance(60_000);
    const changedAt = t.server.clock.now();
    const trashed = await me.api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: a.upload.boxid } }, body: { trashed: true } });
    expect(trashed.response.status).toBe(200);
    const after = await listed();
    expect(after.size).toBe(3);
    // The project itself was not changed since it was made: its last change is the trashing.
    expect(after.timeModified).toBeGreaterThanOrEqual(changedAt);
    expect(after.timeModified).toBeLessThanOrEqual(t.server.clock.now());
    const { data: got } = await me.api.GET('/projects/{projectid}', { params: { path: { projectid } } });
    expect(got).toMatchObject({ size: 3, timeModified: after.timeModified });
  });

  it('lists the most recently changed first with sort=modified, page by page, and each project with its artwork, as the project alone has it', async () => {
    const me = await t.as(`sorter-${backend}@example.com`);
    const made: string[] = [];
    for (const name of ['Old', 'Middle', 'New']) {
      made.push((await me.api.POST('/projects', { body: { name } })).data!.id);
      t.server.clock.advance(1000);
    }
    // Old changes through a box, then Middle itself: the last change of each, newest first, is Middle, Old, New.
    await me.api.uploadFile(made[0], { name: 'A.wav', mimeType: 'audio/wav' }, bytes('12'));
    t.server.clock.advance(1000);
    await me.api.POST('/projects/{projectid}', { params: { path: { projectid: made[1] } }, body: { name: 'Middle, renamed' } });
    const names = async (query: { sort?: 'created' | 'modified'; limit?: number }) => (await me.api.GET('/projects', { params: { query } })).data!.map((project) => project.name);
    expect(await names({})).toEqual(['New', 'Middle, renamed', 'Old']);
    expect(await names({ sort: 'created' })).toEqual(['New', 'Middle, renamed', 'Old']);
    expect(await names({ sort: 'modified' })).toEqual(['Middle, renamed', 'Old', 'New']);
    const listed = (await me.api.GET('/projects', { params: { query: { sort: 'modified' } } })).data!;
    expect(listed.map((project) => project.timeModified)).toEqual([...listed.map((project) => project.timeModified)].sort((a, b) => b - a));

    // Its pages go on in the same order: the next link keeps sort=modified, and the cursor starts after the last sent.
    const first = await me.api.GET('/projects', { params: { query: { sort: 'modified', limit: 2 } } });
    expect(first.data!.map((project) => project.name)).toEqual(['Middle, renamed', 'Old']);
    const next = new URL(/<([^>]+)>/.exec(first.response.headers.get('link') ?? '')![1]);
    expect(next.searchParams.get('sort')).toBe('modified');
    const second = await fetch(next, { headers: { Authorization: `Bearer ${me.token}` } });
    expect(((await second.json()) as Array<{ name: string }>).map((project) => project.name)).toEqual(['New']);
    expect(second.headers.get('link')).toBeNull();
    expect((await t.fetch('/projects?sort=newest', { token: me.token })).status).toBe(400);

    // Artwork: the listing (which reads it with the projects, in one query) has what the project alone has, and its URL serves the image.
    expect((await me.api.uploadArtwork(made[2], { name: 'cover.png', mimeType: 'image/png' }, PNG)).error).toBeUndefined();
    const withArtwork = (await me.api.GET('/projects')).data!.find((project) => project.id === made[2])!;
    const alone = (await me.api.GET('/projects/{projectid}', { params: { path: { projectid: made[2] } } })).data!;
    expect(withArtwork.artwork).toMatchObject({ contentType: 'image/png' });
    expect(withArtwork.artwork!.url.split('?')[0]).toBe(alone.artwork!.url.split('?')[0]);
    const image = await fetch(withArtwork.artwork!.url);
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);
    expect((await me.api.GET('/projects')).data!.filter((project) => project.artwork).map((project) => project.id)).toEqual([made[2]]);
  });

  it('answers the storage used against the quota, counted as uploads are refused by it', async () => {
    const me = await t.as(`storage-${backend}@example.com`);
    expect((await me.api.GET('/me/storage')).data).toEqual({ used: 0, quota: QUOTA });
    const { data: project } = await me.api.POST('/projects', { body: { name: 'Stored' } });
    await me.api.uploadFile(project!.id, { name: 'A.wav', mimeType: 'audio/wav' }, bytes('12345'));
    expect((await me.api.GET('/me/storage')).data).toEqual({ used: 5, quota: QUOTA });
    const over = await me.api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: 'Big.wav', mimeType: 'audio/wav', size: QUOTA - 4 } });
    expect(over.response.status).toBe(413);
    expect(over.error).toMatchObject({ type: '/problems/storage-quota-exceeded', used: 5, quota: QUOTA });
    const user = (await t.server.ctx.store.users.findByEmail(`storage-${backend}@example.com`))!;
    await t.server.ctx.store.db.execute('UPDATE users SET storage_quota = $2 WHERE id = $1', [user.id, 50]);
    expect((await me.api.GET('/me/storage')).data).toEqual({ used: 5, quota: 50 });
  });
});
