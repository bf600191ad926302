/**
 * Paging of the list operations: arrays as before without
 * `limit`; pages cut by a signed keyset cursor with an RFC 8288
 * `Link: <…>; rel="next"` when more follow; nothing repeated or skipped when
 * items come and go between pages; a forged, altered or borrowed cursor is
 * a 400 naming `cursor`. On both stores.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';

type Item = { id: string };

/** The URL of rel="next" in a Link header (RFC 8288), or undefined. */
function nextOf(link: string | null): string | undefined {
  return link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}

describe.each(backends)('paging of lists on %s', (backend) => {
  const t = useTestServer(backend);

  /** Every page from `path`, following rel="next" to the end. */
  async function allPages(token: string, path: string): Promise<Item[][]> {
    const pages: Item[][] = [];
    let url: string | undefined = t.server.apiUrl + path;
    while (url) {
      expect(url.startsWith(t.server.apiUrl), url).toBe(true);
      const answer: Response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      expect(answer.status, await answer.clone().text()).toBe(200);
      pages.push((await answer.json()) as Item[]);
      url = nextOf(answer.headers.get('link'));
      expect(pages.length).toBeLessThan(50);
    }
    return pages;
  }

  async function players(email: string, count: number) {
    const { api, token } = await t.as(email);
    for (let i = 0; i < count; i++) {
      // A millisecond apart at least, so that "newest first" is an order of time, not only of ids.
      t.server.clock.advance(1);
      await api.POST('/players', { body: { name: `Player ${i}` } });
    }
    return { api, token };
  }

  it('answers the whole array, without Link, when no page is asked for; and the same items in pages of `limit`, each but the last with rel="next"', async () => {
    const { token } = await players('pages@example.com', 7);
    const whole = await t.fetch('/players', { token });
    expect(whole.headers.get('link')).toBeNull();
    const all = (await whole.json()) as Item[];
    expect(all).toHaveLength(7);

    const pages = await allPages(token, '/players?limit=3');
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((player) => player.id)).toEqual(all.map((player) => player.id));
    // A limit as large as the list: one page, no link.
    expect(await allPages(token, '/players?limit=7')).toHaveLength(1);
  });

  it('neither repeats nor skips an item when others are added or removed between pages', async () => {
    const { api, token } = await players('moving@example.com', 6);
    const before = (await (await t.fetch('/players', { token })).json()) as Item[];
    const first = await t.fetch('/players?limit=2', { token });
    const firstPage = (await first.json()) as Item[];
    const next = nextOf(first.headers.get('link'))!;
    // A new player (the newest, so first in the list) and the removal of one already sent.
    t.server.clock.advance(1);
    const { data: added } = await api.POST('/players', { body: { name: 'Added meanwhile' } });
    await api.DELETE('/players/{playerid}', { params: { path: { playerid: firstPage[0].id } } });
    const rest: Item[] = [];
    let url: string | undefined = next;
    while (url) {
      const answer: Response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      rest.push(...((await answer.json()) as Item[]));
      url = nextOf(answer.headers.get('link'));
    }
    expect([...firstPage, ...rest].map((player) => player.id)).toEqual(before.map((player) => player.id));
    expect(rest.map((player) => player.id)).not.toContain(added!.id);
  });

  it('pages projects and the boxes of a project in their own orders', async () => {
    const { api, token } = await t.as('boxes@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Boxes' } });
    for (let i = 0; i < 5; i++) {
      t.server.clock.advance(1);
      await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: project!.id } }, body: { name: `Folder ${i}` } });
    }
    const whole = (await (await t.fetch(`/projects/${project!.id}/all`, { token })).json()) as Item[];
    expect(whole).toHaveLength(5);
    const pages = await allPages(token, `/projects/${project!.id}/all?limit=2`);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((box) => box.id)).toEqual(whole.map((box) => box.id));

    t.server.clock.advance(1);
    await api.POST('/projects', { body: { name: 'Second' } });
    const projects = (await (await t.fetch('/projects', { token })).json()) as Item[];
    const projectPages = await allPages(token, '/projects?limit=1');
    expect(projectPages.flat().map((item) => item.id)).toEqual(projects.map((item) => item.id));
    expect(projectPages).toHaveLength(projects.length);
  });

  it('gives an opaque cursor: neither the last item\'s id nor its sort key can be read from it, and two cursors of one place differ', async () => {
    const { token } = await players('opaque@example.com', 3);
    const first = await t.fetch('/players?limit=1', { token });
    const [last] = (await first.json()) as Array<Item & { timeCreated: number }>;
    const next = new URL(nextOf(first.headers.get('link'))!);
    const cursor = next.searchParams.get('cursor')!;
    // Whatever a client decodes, of the whole cursor or of any dot-separated part, as base64url, base64 or hex.
    const readable = [cursor, ...cursor.split('.')].flatMap((part) => [
      Buffer.from(part, 'base64url').toString('latin1'),
      Buffer.from(part, 'base64').toString('latin1'),
      Buffer.from(part, 'hex').toString('latin1'),
      part,
    ]);
    for (const text of readable) {
      expect(text).not.toContain(last.id);
      expect(text).not.toContain(last.id.slice(4));
      expect(text).not.toContain(String(last.timeCreated));
    }
    // A fresh IV each time: the same place in the list gives a new cursor, and both work.
    const again = new URL(nextOf((await t.fetch('/players?limit=1', { token })).headers.get('link'))!).searchParams.get('cursor')!;
    expect(again).not.toBe(cursor);
    for (const one of [cursor, again]) {
      const page = await t.fetch(`/players?limit=1&cursor=${one}`, { token });
      expect(page.status).toBe(200);
      expect(((await page.json()) as Item[])[0].id).not.toBe(last.id);
    }
  });

  it('refuses an altered cursor, one of another list, and a limit out of range, with a 400 naming the parameter', async () => {
    const { token } = await players('cursors@example.com', 3);
    const next = new URL(nextOf((await t.fetch('/players?limit=1', { token })).headers.get('link'))!);
    const cursor = next.searchParams.get('cursor')!;

    const bytes = Buffer.from(cursor, 'base64url');
    // One bit of the sealed key flipped, and the last byte of the tag.
    const flipped = Buffer.from(bytes);
    flipped[14] ^= 1;
    const retagged = Buffer.from(bytes);
    retagged[retagged.length - 1] ^= 0x80;
    // A cursor of the old, readable form (the key in base64url, a signature beside it), made up.
    const forged = `${Buffer.from(JSON.stringify([0, 'ply_0'])).toString('base64url')}.${'0'.repeat(64)}`;
    const madeUp = Buffer.from(JSON.stringify([-1795318800000, 'ply_4c8n2r7t1v0000000000'])).toString('base64url');
    const { data: project } = await (await t.as('cursors@example.com')).api.POST('/projects', { body: { name: 'Elsewhere' } });
    for (const [path, why] of [
      [`/players?limit=1&cursor=${forged}`, 'it is malformed'],
      [`/players?limit=1&cursor=${madeUp}`, 'it does not authenticate'],
      [`/players?limit=1&cursor=${flipped.toString('base64url')}`, 'it does not authenticate'],
      [`/players?limit=1&cursor=${retagged.toString('base64url')}`, 'it does not authenticate'],
      [`/players?limit=1&cursor=${bytes.subarray(0, 20).toString('base64url')}`, 'it is malformed'],
      [`/projects/${project!.id}/all?limit=1&cursor=${cursor}`, 'it does not authenticate'],
    ] as const) {
      const refused = await t.fetch(path, { token });
      expect(refused.status, path).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await refused.json()) as { type: string; detail: string; errors: Array<{ parameter?: string; detail: string }> };
      expect(problem.type).toBe('/problems/validation-error');
      expect(problem.errors[0]).toMatchObject({ parameter: 'cursor' });
      expect(problem.errors[0].detail).toContain(why);
    }
    for (const limit of ['0', '1001', 'many']) {
      const refused = await t.fetch(`/players?limit=${limit}`, { token });
      expect(refused.status, limit).toBe(400);
      expect(JSON.stringify(await refused.json())).toContain('limit');
    }
  });
});
