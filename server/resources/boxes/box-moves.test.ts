/**
 * Moving boxes (UpdateBoxRequest.parentid) and reordering a folder's or
 * stack's children (UpdateBoxRequest.order), with the rules of addids: no
 * cycles, a stack takes only files, and nothing changes on a refusal.
 */
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

describe.each(backends)('moving and reordering boxes on %s', (backend) => {
  const t = useTestServer(backend);
  let n = 0;

  async function project() {
    const { api } = await t.as(`mover-${backend}-${n++}@example.com`);
    const { data } = await api.POST('/projects', { body: { name: 'Moves' } });
    const projectid = data!.id;
    const folder = async (name: string) => (await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name } })).data!;
    const file = async (name: string, parentid?: string) =>
      (await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name, mimeType: 'audio/wav', size: 4, parentid, autoStack: false } })).data!;
    const update = (fileid: string, body: object) => api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } }, body });
    const get = async (fileid: string) => (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } })).data!;
    /** The ids of a folder's or stack's children, in their order. */
    const childIds = async (fileid: string) => ((await get(fileid)) as { children: Array<{ id: string }> }).children.map((child) => child.id);
    return { api: api as ApiClient, projectid, folder, file, update, get, childIds };
  }

  it('moves a box into a folder or stack at the end, or to the top level with null', async () => {
    const { folder, file, update, get, childIds } = await project();
    const mixes = await folder('Mixes');
    const a = await file('A.wav');
    const b = await file('B.wav');
    const moved = await update(a.stackid, { parentid: mixes.id });
    expect(moved.response.status).toBe(200);
    expect(moved.data).toMatchObject({ id: a.stackid, parentid: mixes.id });
    // A file into another stack: its newest version; the stack it left, now empty, goes.
    const intoStack = await update(a.boxid, { parentid: b.stackid });
    expect(intoStack.data).toMatchObject({ parentid: b.stackid });
    expect(await childIds(b.stackid)).toEqual([b.boxid, a.boxid]);
    expect(await get(a.stackid)).toBeUndefined();
    expect(await childIds(mixes.id)).toEqual([]);
    // Named in its stack, then out to the top level: it loses the name.
    await update(a.boxid, { versionName: 'v2' });
    const out = await update(a.boxid, { parentid: null });
    expect(out.data).not.toHaveProperty('parentid');
    expect(out.data).not.toHaveProperty('versionName');
    // Where it already is: nothing moves.
    const same = await update(b.boxid, { parentid: b.stackid });
    expect(same.response.status).toBe(200);
    expect(await childIds(b.stackid)).toEqual([b.boxid]);
  });

  it('refuses a move into itself, its own contents, a file, a stack for a folder, or another project, and changes nothing', async () => {
    const { api, folder, file, update, get } = await project();
    const outer = await folder('Outer');
    const inner = await folder('Inner');
    await update(inner.id, { parentid: outer.id });
    const a = await file('A.wav');
    const other = await api.POST('/projects', { body: { name: 'Other' } });
    const elsewhere = (await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: other.data!.id } }, body: { name: 'Elsewhere' } })).data!;
    for (const [id, parentid, pattern] of [
      [outer.id, outer.id, /inside itself/],
      [outer.id, inner.id, /inside itself or its own contents/],
      [outer.id, a.boxid, /not a folder or stack/],
      [outer.id, a.stackid, /holds only files/],
      [a.stackid, a.stackid, /holds only files/],
      [a.boxid, elsewhere.id, /not a folder or stack of project/],
    ] as const) {
      const refused = await update(id, { parentid, name: 'Renamed' });
      expect(refused.response.status, `${id} into ${parentid}`).toBe(409);
      expect(refused.error!.detail).toMatch(pattern);
    }
    expect(await get(outer.id)).toMatchObject({ name: 'Outer', children: [{ id: inner.id }] });
    expect((await get(outer.id)).parentid).toBeUndefined();
  });

  it('reorders a stack by a permutation of its children, the last being the newest version, and refuses anything else with 409', async () => {
    const { file, update, childIds } = await project();
    const a = await file('A.wav');
    const b = await file('B.wav', a.stackid);
    const c = await file('C.wav', a.stackid);
    const reordered = await update(a.stackid, { order: [c.boxid, a.boxid, b.boxid] });
    expect(reordered.response.status).toBe(200);
    expect(reordered.data!.object === 'stack' && reordered.data!.children.map((child) => child.id)).toEqual([c.boxid, a.boxid, b.boxid]);
    expect(await childIds(a.stackid)).toEqual([c.boxid, a.boxid, b.boxid]);
    const stranger = await file('D.wav');
    for (const [order, pattern] of [
      [[c.boxid, a.boxid], new RegExp(`leaves out ${b.boxid}`)],
      [[c.boxid, a.boxid, b.boxid, stranger.boxid], new RegExp(`names ${stranger.boxid}, not a child`)],
      [[], /leaves out/],
    ] as const) {
      const refused = await update(a.stackid, { order });
      expect(refused.response.status).toBe(409);
      expect(refused.error!.detail).toMatch(pattern);
    }
    expect((await update(a.stackid, { order: [a.boxid, a.boxid, b.boxid] })).response.status).toBe(400);
    const onFile = await update(a.boxid, { order: [] });
    expect(onFile.response.status).toBe(409);
    expect(onFile.error!.detail).toMatch(/applies to folders and stacks/);
    expect(await childIds(a.stackid)).toEqual([c.boxid, a.boxid, b.boxid]);
    // With addids in the same request, the order lists the children as they are after it.
    const both = await update(a.stackid, { addids: [stranger.boxid], order: [stranger.boxid, c.boxid, a.boxid, b.boxid] });
    expect(both.response.status).toBe(200);
    expect(await childIds(a.stackid)).toEqual([stranger.boxid, c.boxid, a.boxid, b.boxid]);
  });
});
