import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { fileBlobKey } from '../../blobs/keys.ts';

/** Uploads a few bytes as a file; resolves to the upload response. */
async function upload(api: ApiClient, projectid: string, name: string, parentid?: string) {
  const { upload } = (await api.uploadFile(projectid, { name, mimeType: 'audio/wav', parentid }, new TextEncoder().encode(`bytes of ${name}`))).data!;
  return upload;
}

describe.each(backends)('boxes on %s', (backend) => {
  const t = useTestServer(backend);

  async function setup(email = 'boxes@example.com') {
    const { api, token } = await t.as(email);
    const { data } = await api.POST('/projects', { body: { name: 'Boxes' } });
    return { api, token, projectid: data!.id };
  }

  it('files every upload into a stack, and names versions within it', async () => {
    const { api, projectid } = await setup();
    const first = await upload(api, projectid, 'song-v1.wav');
    const second = await upload(api, projectid, 'song-v2.wav', first.stackid);
    expect(second.stackid).toBe(first.stackid);
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: second.boxid } }, body: { versionName: 'vocals up' } });
    const { data: stack } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: first.stackid } } });
    expect(stack).toMatchObject({ object: 'stack', name: 'song-v1', children: [{ id: first.boxid, name: 'song-v1.wav' }, { id: second.boxid, name: 'vocals up' }] });
    const { data: file } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: second.boxid } } });
    expect(file).toMatchObject({ object: 'file', versionName: 'vocals up', parentid: first.stackid, status: 'pending', mimeType: 'audio/wav' });
    expect(file).not.toHaveProperty('children');
    expect(file).not.toHaveProperty('hidden');
  });

  it('refuses versionName on a box outside a stack, and over 100 characters', async () => {
    const { api, token, projectid } = await setup();
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    const outside = await t.fetch(`/projects/${projectid}/files/${folder!.id}`, { ...json({ versionName: 'v1' }), token });
    expect(outside.status).toBe(409);
    expect((await outside.json()).detail).toMatch(/not in a stack/);
    const file = await upload(api, projectid, 'a.wav');
    const long = await t.fetch(`/projects/${projectid}/files/${file.boxid}`, { ...json({ versionName: 'x'.repeat(101) }), token });
    expect(long.status).toBe(400);
    const exactly100 = await t.fetch(`/projects/${projectid}/files/${file.boxid}`, { ...json({ versionName: 'x'.repeat(100) }), token });
    expect(exactly100.status).toBe(200);
  });

  it('trashes a folder with everything inside it, and restores them together', async () => {
    const { api, projectid } = await setup();
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    const file = await upload(api, projectid, 'in-folder.wav', folder!.id);
    const outside = await upload(api, projectid, 'outside.wav');
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: folder!.id } }, body: { trashed: true } });
    const trashed = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!;
    const flag = (id: string) => trashed.find((box) => box.id === id)?.trashed;
    expect([flag(folder!.id), flag(file.stackid), flag(file.boxid), flag(outside.boxid)]).toEqual([true, true, true, false]);
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: folder!.id } }, body: { trashed: false } });
    const restored = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!;
    expect(restored.filter((box) => box.trashed)).toEqual([]);
  });

  it('hides only folders and stacks, leaves their children listed, and lists no hidden box', async () => {
    const { api, token, projectid } = await setup();
    const file = await upload(api, projectid, 'a.wav');
    const refused = await t.fetch(`/projects/${projectid}/files/${file.boxid}`, { ...json({ hidden: true }), token });
    expect(refused.status).toBe(409);
    const { data: stack } = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: file.stackid } }, body: { hidden: true } });
    expect(stack).toMatchObject({ hidden: true });
    const ids = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!.map((box) => box.id);
    expect(ids).toContain(file.boxid);
    expect(ids).not.toContain(file.stackid);
    // Get still answers for a hidden box.
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: file.stackid } } })).response.status).toBe(200);
  });

  it('deletes a file with 200 {}, and the stack with its only version', async () => {
    const { api, token, projectid } = await setup();
    const one = await upload(api, projectid, 'one.wav');
    const two = await upload(api, projectid, 'two.wav', one.stackid);
    const deleteFile = (fileid: string) => t.fetch(`/projects/${projectid}/files/${fileid}`, { method: 'DELETE', token });
    const first = await deleteFile(one.boxid);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({});
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: one.stackid } } })).response.status).toBe(200);
    await deleteFile(two.boxid);
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: one.stackid } } })).response.status).toBe(404);
    expect((await deleteFile(two.boxid)).status).toBe(404);
    expect(await t.server.ctx.blobs.stat(fileBlobKey(projectid, two.boxid))).toBeUndefined();
  });

  it('refuses to delete a folder or stack', async () => {
    const { api, token, projectid } = await setup();
    const file = await upload(api, projectid, 'a.wav');
    const response = await t.fetch(`/projects/${projectid}/files/${file.stackid}`, { method: 'DELETE', token });
    expect(response.status).toBe(409);
  });

  it('creates folders with a hex colour, or the default, and lists them', async () => {
    const { api, token, projectid } = await setup();
    const { data: plain } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Plain' } });
    const { data: green } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Green', color: '#22c55e' } });
    expect(plain).toMatchObject({ object: 'folder', color: '#64748b', children: [], hidden: false, trashed: false });
    expect(green!.color).toBe('#22c55e');
    const bad = await t.fetch(`/projects/${projectid}/folders`, { ...json({ name: 'Bad', color: '#12345' }), token });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors[0].pointer).toBe('#/color');
    const { data: folders } = await api.GET('/projects/{projectid}/folders', { params: { path: { projectid } } });
    expect(folders!.map((folder) => folder.name)).toEqual(['Plain', 'Green']);
  });

  it('creates a stack from files in the order given, and deletes the stacks the move empties', async () => {
    const { api, projectid } = await setup();
    const a = await upload(api, projectid, 'a.wav');
    const b = await upload(api, projectid, 'b.wav');
    const { data: stack } = await api.POST('/projects/{projectid}/stacks', { params: { path: { projectid } }, body: { name: 'Together', childids: [b.boxid, a.boxid] } });
    expect(stack!.children.map((child) => child.id)).toEqual([b.boxid, a.boxid]);
    const ids = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!.map((box) => box.id);
    expect(ids).not.toContain(a.stackid);
    expect(ids).not.toContain(b.stackid);
  });

  it('refuses stacks of folders, of unknown ids, and of ids from another project, and changes nothing', async () => {
    const { api, token, projectid } = await setup();
    const { data: other } = await api.POST('/projects', { body: { name: 'Other' } });
    const foreign = await upload(api, other!.id, 'foreign.wav');
    const mine = await upload(api, projectid, 'mine.wav');
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    const before = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data;
    for (const childids of [[mine.boxid, folder!.id], [mine.boxid, 'box_unknown000000'], [mine.boxid, foreign.boxid]]) {
      const response = await t.fetch(`/projects/${projectid}/stacks`, { ...json({ name: 'S', childids }), token });
      expect(response.status, childids.join()).toBe(409);
    }
    expect((await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data).toEqual(before);
    // The same holds for addids and for reading across projects.
    const add = await t.fetch(`/projects/${projectid}/files/${folder!.id}`, { ...json({ addids: [foreign.boxid] }), token });
    expect(add.status).toBe(409);
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: foreign.boxid } } })).response.status).toBe(404);
  });

  it('adds and removes children, and refuses to put a folder inside itself', async () => {
    const { api, token, projectid } = await setup();
    const { data: outer } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Outer' } });
    const { data: inner } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Inner' } });
    const file = await upload(api, projectid, 'a.wav');
    const { data: filled } = await api.POST('/projects/{projectid}/files/{fileid}', {
      params: { path: { projectid, fileid: outer!.id } },
      body: { addids: [inner!.id, file.stackid], name: 'Outer renamed' },
    });
    expect(filled).toMatchObject({ name: 'Outer renamed', children: [{ id: inner!.id, name: 'Inner' }, { id: file.stackid, name: 'a' }] });
    const cycle = await t.fetch(`/projects/${projectid}/files/${inner!.id}`, { ...json({ addids: [outer!.id] }), token });
    expect(cycle.status).toBe(409);
    const { data: emptied } = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: outer!.id } }, body: { removeids: [inner!.id] } });
    expect((emptied as { children: Array<{ id: string }> }).children.map((child) => child.id)).toEqual([file.stackid]);
    const { data: moved } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: inner!.id } } });
    expect(moved).not.toHaveProperty('parentid');
    const notChild = await t.fetch(`/projects/${projectid}/files/${outer!.id}`, { ...json({ removeids: [inner!.id] }), token });
    expect(notChild.status).toBe(409);
    const onFile = await t.fetch(`/projects/${projectid}/files/${file.boxid}`, { ...json({ addids: [inner!.id] }), token });
    expect(onFile.status).toBe(409);
  });

  it('lets viewers read and refuses their writes with 403; strangers get 404', async () => {
    const { api, projectid } = await setup('owner-of-boxes@example.com');
    await api.POST('/players', { body: { name: 'Invite', projectid, collaborators: [{ email: 'viewer@example.com', role: 'viewer' }] } });
    const viewer = await t.as('viewer@example.com');
    expect((await viewer.api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).response.status).toBe(200);
    const write = await viewer.api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    expect(write.response.status).toBe(403);
    const stranger = await t.as('nobody@example.com');
    expect((await stranger.api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).response.status).toBe(404);
  });
});
