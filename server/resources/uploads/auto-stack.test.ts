/**
 * Versions stack themselves (the studio), through requestUploadUrl: "Night
 * Drive.wav" then "Night Drive v2.wav" make one stack "Night Drive" of two
 * versions; a stack an upload makes is named after the file without its
 * extension; the account preference and the request's autoStack turn it off.
 */
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

describe.each(backends)('versions that stack themselves on %s', (backend) => {
  const t = useTestServer(backend);
  let n = 0;

  async function project() {
    const { api } = await t.as(`stacker-${backend}-${n++}@example.com`);
    const { data } = await api.POST('/projects', { body: { name: 'Album' } });
    return { api, projectid: data!.id };
  }
  const ask = (api: ApiClient, projectid: string, name: string, extra: { parentid?: string; autoStack?: boolean } = {}) =>
    api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name, mimeType: 'audio/wav', size: 4, ...extra } });
  const box = async (api: ApiClient, projectid: string, fileid: string) => (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data!;

  it('names the stack an upload makes after the file without its extension', async () => {
    const { api, projectid } = await project();
    const { data } = await ask(api, projectid, 'Night Drive.wav');
    expect(data).toMatchObject({ parentid: null, autoStacked: false });
    expect(data).not.toHaveProperty('versionName');
    expect(await box(api, projectid, data!.stackid)).toMatchObject({ object: 'stack', name: 'Night Drive', children: [{ id: data!.boxid, name: 'Night Drive.wav' }] });
  });

  it('adds "Night Drive v2.wav" to the stack "Night Drive" as its newest version, named by its marker, in the same folder only', async () => {
    const { api, projectid } = await project();
    const first = (await ask(api, projectid, 'Night Drive.wav')).data!;
    const second = (await ask(api, projectid, 'night drive  v2.wav')).data!;
    expect(second).toMatchObject({ stackid: first.stackid, parentid: null, autoStacked: true, versionName: 'v2' });
    const third = (await ask(api, projectid, 'Night Drive - take 5.wav')).data!;
    expect(third).toMatchObject({ stackid: first.stackid, versionName: 'take 5' });
    expect(await box(api, projectid, first.stackid)).toMatchObject({
      name: 'Night Drive',
      children: [
        { id: first.boxid, name: 'Night Drive.wav' },
        { id: second.boxid, name: 'v2' },
        { id: third.boxid, name: 'take 5' },
      ],
    });
    expect(await box(api, projectid, second.boxid)).toMatchObject({ name: 'night drive  v2.wav', versionName: 'v2', parentid: first.stackid });
    // In a folder, the stack at the top level is not joined: a new stack of its own, in the folder.
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes' } });
    const elsewhere = (await ask(api, projectid, 'Night Drive (2).wav', { parentid: folder!.id })).data!;
    expect(elsewhere).toMatchObject({ parentid: folder!.id, autoStacked: false });
    expect(elsewhere.stackid).not.toBe(first.stackid);
    // A file whose rest matches nothing lands as today.
    expect((await ask(api, projectid, 'Other Song v2.wav')).data).toMatchObject({ autoStacked: false, parentid: null });
  });

  it('turns a lone file "Night Drive.wav" into a stack "Night Drive" in its place, holding it then the new version', async () => {
    const { api, projectid } = await project();
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes' } });
    const lone = (await ask(api, projectid, 'Night Drive.wav')).data!;
    // Out of its stack and into the folder, between two others: a file on its own.
    const before = (await ask(api, projectid, 'Before.wav', { parentid: folder!.id })).data!;
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: lone.boxid } }, body: { parentid: folder!.id } });
    const after = (await ask(api, projectid, 'After.wav', { parentid: folder!.id })).data!;
    // Its stack, left with no version, is gone.
    expect((await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: lone.stackid } } })).response.status).toBe(404);
    const version = (await ask(api, projectid, 'Night Drive_2.wav', { parentid: folder!.id })).data!;
    expect(version).toMatchObject({ parentid: folder!.id, autoStacked: true, versionName: '_2' });
    const stack = await box(api, projectid, version.stackid);
    expect(stack).toMatchObject({ object: 'stack', name: 'Night Drive', parentid: folder!.id, children: [{ id: lone.boxid }, { id: version.boxid, name: '_2' }] });
    expect(((await box(api, projectid, folder!.id)) as { children: Array<{ id: string }> }).children.map((child) => child.id)).toEqual([before.stackid, version.stackid, after.stackid]);
  });

  it('joins "Night Drive v1" and "Night Drive v2.wav" as one stack "Night Drive", the first version named v1', async () => {
    const { api, projectid } = await project();
    const first = (await ask(api, projectid, 'Night Drive v1.wav')).data!;
    expect(first).toMatchObject({ autoStacked: false });
    expect(await box(api, projectid, first.stackid)).toMatchObject({ name: 'Night Drive v1' });
    const second = (await ask(api, projectid, 'Night Drive V2.wav')).data!;
    expect(second).toMatchObject({ autoStacked: true, stackid: first.stackid });
    expect(await box(api, projectid, first.stackid)).toMatchObject({
      object: 'stack',
      name: 'Night Drive',
      children: [
        { id: first.boxid, name: 'v1' },
        { id: second.boxid, name: 'V2' },
      ],
    });
    // Another track's v1 stays apart.
    const other = (await ask(api, projectid, 'Daybreak v1.wav')).data!;
    expect(other.stackid).not.toBe(first.stackid);
  });

  it('stacks nothing when the account preference or the request turns it off, nor into a trashed stack', async () => {
    const { api, projectid } = await project();
    const first = (await ask(api, projectid, 'Night Drive.wav')).data!;
    expect((await ask(api, projectid, 'Night Drive v2.wav', { autoStack: false })).data).toMatchObject({ autoStacked: false });
    const me = await api.POST('/me', { body: { autoStack: false } });
    expect(me.data).toMatchObject({ autoStack: false });
    expect((await api.GET('/me')).data).toMatchObject({ autoStack: false });
    expect((await ask(api, projectid, 'Night Drive v3.wav')).data).toMatchObject({ autoStacked: false });
    // The request's own choice overrides the preference.
    expect((await ask(api, projectid, 'Night Drive v4.wav', { autoStack: true })).data).toMatchObject({ autoStacked: true, stackid: first.stackid });
    await api.POST('/me', { body: { autoStack: true } });
    await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: first.stackid } }, body: { trashed: true } });
    // Not into the trashed stack: into the first of the family left, "Night Drive v2" (made while stacking was off), now named "Night Drive".
    const trashed = (await box(api, projectid, first.stackid)) as { children: Array<{ id: string }> };
    const fifth = (await ask(api, projectid, 'Night Drive v5.wav')).data!;
    expect(fifth.stackid).not.toBe(first.stackid);
    expect(trashed.children.map((child) => child.id)).not.toContain(fifth.boxid);
    expect(await box(api, projectid, fifth.stackid)).toMatchObject({ object: 'stack', name: 'Night Drive', trashed: false });
    // Into a stack named by parentid, the file goes where it was sent.
    expect((await ask(api, projectid, 'Elsewhere v2.wav', { parentid: first.stackid })).data).toMatchObject({ stackid: first.stackid, autoStacked: false });
  });
});
