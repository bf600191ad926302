/**
 * The lists whose pages are read by keyset in the store (GET /players, and
 * GET /projects/:id/all with `limit` or `cursor`): every page is the one
 * http/paging.ts pageOf cuts from the whole list, which answers as before.
 * The data is made through the store's batch paths (as the bench's is),
 * with what a keyset can get wrong: creation times shared by several items
 * (the id breaks the tie), hidden boxes (not listed, yet named among their
 * parent's children), trashed ones (listed), and players recorded under
 * another owner than their project's. On both stores.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';
import { makePlayers } from '../testing/listings-data.ts';
import { newBox } from '../resources/boxes/boxes-service.ts';
import type { BoxRecord } from '../resources/boxes/box-repository.ts';
import { encodeCursor } from './paging.ts';
import { compareKeys, newestFirst, type SortKey } from '../lib/sort-keys.ts';
import { listOrder } from '../resources/boxes/boxes-service.ts';
import type { Schemas } from '../lib/api-types.ts';

type Item = { id: string };

/** The URL of rel="next" in a Link header (RFC 8288), or undefined. */
const nextOf = (link: string | null) => (link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined);

/** `items` in the order of `keyOf`, cut in pages of `limit`: what pageOf answers page after page. */
function pagesOf<T>(items: T[], keyOf: (item: T) => SortKey, limit: number): T[][] {
  const sorted = [...items].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
  return Array.from({ length: Math.ceil(sorted.length / limit) }, (_, i) => sorted.slice(i * limit, (i + 1) * limit));
}

describe.each(backends)('lists paged by keyset in the store on %s', (backend) => {
  const t = useTestServer(backend);

  /** Every page from `path`, following rel="next" to the end; each one's link must keep the limit. */
  async function allPages<T>(token: string, path: string, limit: number): Promise<T[][]> {
    const pages: T[][] = [];
    let url: string | undefined = `${t.server.apiUrl}${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;
    while (url) {
      const answer: Response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      expect(answer.status, await answer.clone().text()).toBe(200);
      pages.push((await answer.json()) as T[]);
      url = nextOf(answer.headers.get('link'));
      if (url) expect(new URL(url).searchParams.get('limit')).toBe(String(limit));
      expect(pages.length).toBeLessThan(200);
    }
    return pages;
  }

  async function userId(email: string) {
    return (await t.server.ctx.store.users.findByEmail(email))!.id;
  }

  it('pages the boxes of a project as pageOf cut them from the whole listing, ties, hidden and trashed boxes and children included', async () => {
    const { api, token } = await t.as('boxes@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Keyset' } });
    const projectId = project!.id;
    const owner = await userId('boxes@example.com');
    const at = Date.now();
    const boxes: BoxRecord[] = [];
    const add = (fields: Parameters<typeof newBox>[0], time: number) => {
      const box = newBox(fields, time);
      boxes.push(box);
      return box;
    };
    // Folders, two created in the same millisecond, one hidden.
    const folders = [0, 0, 1, 2].map((offset, i) => add({ projectId, kind: 'folder', name: `Folder ${i}`, parentId: null, position: i, hidden: i === 3 }, at + offset));
    // Stacks of versions, in folders and at the top, three created in the same millisecond; versions named, one hidden.
    for (let s = 0; s < 9; s++) {
      const stack = add({ projectId, kind: 'stack', name: `Stack ${s}`, parentId: s < 4 ? folders[s % 3].id : null, position: 10 + s, hidden: s === 8 }, at + Math.min(s, 3));
      for (let v = 0; v < 1 + (s % 3); v++) {
        add(
          { projectId, kind: 'file', name: `take ${s}.${v}.wav`, parentId: stack.id, position: 2 - v, versionName: v === 1 ? `v${v + 1}` : null, status: 'ready', size: 1000 + v, mimeType: 'audio/wav', hidden: v === 2, trashed: s === 5 },
          at + 10 + s,
        );
      }
    }
    // Loose files, half of them sharing one creation time; one hidden, one trashed.
    for (let f = 0; f < 12; f++) {
      add({ projectId, kind: 'file', name: `loose ${f}.wav`, parentId: null, position: 30 + f, status: 'pending', size: 10, mimeType: 'audio/wav', hidden: f === 4, trashed: f === 7, uploaderId: owner }, at + 50 + (f % 2 === 0 ? 0 : f));
    }
    await t.server.ctx.store.boxes.insertMany(boxes);

    const whole = (await (await t.fetch(`/projects/${projectId}/all`, { token })).json()) as Schemas['Box'][];
    expect(whole).toHaveLength(boxes.filter((box) => !box.hidden).length);
    const stackWithHiddenChild = whole.find((box) => box.id === boxes.find((b) => b.hidden && b.kind === 'file')!.parentId) as Schemas['StackBox'];
    expect(stackWithHiddenChild.children).toHaveLength(3);
    for (const limit of [1, 2, 3, 5, 7, 100]) {
      const pages = await allPages<Schemas['Box']>(token, `/projects/${projectId}/all`, limit);
      expect(pages, `limit=${limit}`).toEqual(pagesOf(whole, listOrder, limit));
    }
  });

  it("pages an account's players as pageOf cut them from the whole list: ties by id, other accounts' players left out, and a player recorded under another owner listed by its project's", async () => {
    const { api: mine, token } = await t.as('players@example.com');
    const { api: theirs, token: theirToken } = await t.as('other-players@example.com');
    const me = await userId('players@example.com');
    const them = await userId('other-players@example.com');
    const project = async (api: typeof mine, name: string) => (await api.POST('/projects', { body: { name } })).data!.id;
    const [first, second, elsewhere] = [await project(mine, 'First'), await project(mine, 'Second'), await project(theirs, 'Theirs')];
    // Four players a second, in two projects of mine and one of theirs, made at the same moment: their times interleave.
    await makePlayers(t.server.ctx.store, me, first, 13, { sameSecond: 4 });
    await makePlayers(t.server.ctx.store, me, second, 9, { sameSecond: 4 });
    const [recordedTheirs, alsoTheirs] = await makePlayers(t.server.ctx.store, them, elsewhere, 6, { sameSecond: 4 });
    // Rows as servers before migration 12 left them: the player of my project recorded under them is mine, and theirs
    // recorded under me is not.
    const [mineRecordedUnderThem] = await makePlayers(t.server.ctx.store, me, first, 1);
    await t.server.ctx.store.db.execute('UPDATE players SET owner_id = $1 WHERE id = $2', [them, mineRecordedUnderThem]);
    await t.server.ctx.store.db.execute('UPDATE players SET owner_id = $1 WHERE id = $2', [me, recordedTheirs]);

    const whole = (await (await t.fetch('/players', { token })).json()) as Schemas['Player'][];
    expect(whole).toHaveLength(13 + 9 + 1);
    expect(whole.map((player) => player.id)).toContain(mineRecordedUnderThem);
    expect(whole.map((player) => player.id)).not.toContain(recordedTheirs);
    for (const limit of [1, 2, 4, 5, 100]) {
      expect(await allPages<Schemas['Player']>(token, '/players', limit), `limit=${limit}`).toEqual(pagesOf(whole, newestFirst, limit));
    }
    const theirWhole = (await (await t.fetch('/players', { token: theirToken })).json()) as Schemas['Player'][];
    expect(theirWhole.map((player) => player.id)).toContain(recordedTheirs);
    expect(theirWhole.map((player) => player.id)).toContain(alsoTheirs);
    expect(await allPages<Schemas['Player']>(theirToken, '/players', 2)).toEqual(pagesOf(theirWhole, newestFirst, 2));
  });

  it('refuses a cursor this server sealed for the list but with a sort key of another form, as a malformed cursor', async () => {
    const { api, token } = await t.as('shapes@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Shapes' } });
    for (const [path, key] of [
      ['/players', ['ply_0000000000000000']],
      ['/players', [1, 2]],
      [`/projects/${project!.id}/all`, [0, 'box_0000000000000000']],
      [`/projects/${project!.id}/all`, [0, 1, 2]],
    ] as Array<[string, SortKey]>) {
      const answer = await t.fetch(`${path}?cursor=${encodeCursor(t.server.ctx, path, key)}`, { token });
      expect(answer.status, path).toBe(400);
      expect(await answer.json()).toMatchObject({ errors: [{ parameter: 'cursor', detail: 'it is malformed' }] });
    }
    // The same list with a key of its form (after a player made a minute from now, so before every one): a page of all.
    const made = await makePlayers(t.server.ctx.store, await userId('shapes@example.com'), project!.id, 2);
    const page = await t.fetch(`/players?cursor=${encodeCursor(t.server.ctx, '/players', [-(Date.now() + 60_000), 'ply_'])}`, { token });
    expect(page.status).toBe(200);
    expect(((await page.json()) as Item[]).map((item) => item.id).sort()).toEqual([...made].sort());
  });

  it("batch-inserts boxes as inserting them one by one would: each parent's version counts its new children, and the project's box version moves", async () => {
    const { api } = await t.as('batch@example.com');
    const make = async () => (await api.POST('/projects', { body: { name: 'Batch' } })).data!.id;
    const [oneByOne, batched] = [await make(), await make()];
    const { store } = t.server.ctx;
    const tree = (projectId: string, existing: BoxRecord) => {
      const stack = newBox({ projectId, kind: 'stack', name: 'Stack', parentId: null, position: 0 }, 1);
      const files = [0, 1, 2].map((v) => newBox({ projectId, kind: 'file', name: `v${v}`, parentId: stack.id, position: v, status: 'ready', size: 1, mimeType: 'audio/wav' }, 2 + v));
      const inExisting = newBox({ projectId, kind: 'file', name: 'in the folder', parentId: existing.id, position: 0, status: 'ready', size: 1, mimeType: 'audio/wav' }, 9);
      return [stack, ...files, inExisting];
    };
    const folderOf = async (projectId: string) => {
      const folder = newBox({ projectId, kind: 'folder', name: 'Folder', parentId: null, position: 1 }, 0);
      await store.boxes.insert(folder);
      return folder;
    };
    const [folderA, folderB] = [await folderOf(oneByOne), await folderOf(batched)];
    const versionBefore = (await store.projects.get(batched))!.boxVersion;
    for (const box of tree(oneByOne, folderA)) await store.boxes.insert(box);
    const batch = tree(batched, folderB);
    await store.boxes.insertMany(batch);
    const versions = async (projectId: string) => (await store.boxes.listProject(projectId)).map((box) => [box.name, box.version, box.parentId === null]);
    expect(await versions(batched)).toEqual(await versions(oneByOne));
    expect((await store.boxes.get(batched, batch[0].id))!.version).toBe(4);
    expect((await store.boxes.get(batched, folderB.id))!.version).toBe(2);
    expect((await store.projects.get(batched))!.boxVersion).toBeGreaterThan(versionBefore);
  });
});
