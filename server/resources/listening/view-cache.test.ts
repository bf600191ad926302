/**
 * The listener's view keeps its tracks (signed URLs included) by what decides
 * them (view-tracks-cache.ts): over HTTP on both stores, a view read again
 * shares the first's tracks; any change to the boxes (through this server or
 * another process on the same database), to the player, to the grant or to
 * an uploader's display name shows at once; a listener the player no longer
 * lets in gets nothing from the cache; and the one staleness bound, time, is
 * the stated window. Then the cache itself: its window, its byte budget, and
 * the answer's bytes where responses are not validated.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { openStore } from '../../repositories.ts';
import { reuseWindowMs, ViewTracksCache, type TracksEntry } from './view-tracks-cache.ts';

const OWNER = 'cache.owner@example.com';
type View = Schemas['PlayerView'];

/** Every signed URL of a view's tracks. */
const urlsOf = (view: View) =>
  view.tracks.flatMap((track) =>
    track.versions.flatMap((version) => [...Object.values(version.streams ?? {}), ...(version.peaks ? [version.peaks.json, version.peaks.dat] : []), ...(version.download ? [version.download.url] : [])]),
  );

describe.each(backends)('the view cache on %s', (backend) => {
  const t = useTestServer(backend);
  let projectid: string;
  let fileids: string[];

  const viewOf = async (playerid: string, token?: string) => {
    const response = await t.fetch(`/players/${playerid}/view`, { token });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as View;
  };
  const makePlayer = async (body: Partial<Schemas['CreatePlayerRequest']> = {}) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Cached', projectid, public: true, ...body } as Schemas['CreatePlayerRequest'] });
    expect(error).toBeUndefined();
    return data!;
  };

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    const { data: project } = await api.POST('/projects', { body: { name: 'Cache EP' } });
    projectid = project!.id;
    fileids = [];
    // Audio that is never analysed here (PROCESSING=external): pending, it still streams its original to who may download.
    for (const name of ['one.wav', 'two.wav']) fileids.push((await api.uploadFile(projectid, { name, mimeType: 'audio/wav' }, Buffer.from('RIFF....WAVE'))).data!.box.id);
  });

  it('serves the same tracks again, and shows a box written through the API at once', async () => {
    const player = await makePlayer({ options: { downloads: true } });
    const first = await viewOf(player.id);
    expect(urlsOf(first).length).toBeGreaterThanOrEqual(4);
    const again = await viewOf(player.id);
    // The same URLs, signed once: the tracks came from the cache.
    expect(urlsOf(again)).toEqual(urlsOf(first));
    expect(again.urlsExpire).toBe(first.urlsExpire);

    const { api } = await t.as(OWNER);
    expect((await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: fileids[0] } }, body: { name: 'renamed.wav' } })).error).toBeUndefined();
    const renamed = await viewOf(player.id);
    expect(renamed.tracks.flatMap((track) => track.versions.map((version) => version.name))).toContain('renamed.wav');
  });

  it("shows another process's box write at once: the box version is read from the database on every view", async () => {
    const player = await makePlayer();
    await viewOf(player.id);
    const { dataDir, databaseUrl } = t.server.ctx.config;
    const other = await openStore({ dataDir, databaseUrl });
    try {
      const box = (await other.boxes.get(projectid, fileids[1]))!;
      await other.boxes.save({ ...box, name: 'from-elsewhere.wav', timeModified: Date.now() });
    } finally {
      await other.close();
    }
    const after = await viewOf(player.id);
    expect(after.tracks.flatMap((track) => track.versions.map((version) => version.name))).toContain('from-elsewhere.wav');
  });

  it('shows a change to the player at once: downloads switched off take every download URL out', async () => {
    const player = await makePlayer({ options: { downloads: true } });
    const before = await viewOf(player.id);
    expect(before.tracks.every((track) => track.versions.every((version) => version.download))).toBe(true);
    const { api } = await t.as(OWNER);
    expect((await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { options: { downloads: false } } })).error).toBeUndefined();
    const after = await viewOf(player.id);
    expect(after.tracks.some((track) => track.versions.some((version) => version.download))).toBe(false);
    // The original is streamed only to who may download it: no stream is left on these unanalysed files.
    expect(urlsOf(after)).toEqual([]);
  });

  it("never gives one grant's URLs to another: a member's view after a listener's carries the member's grant", async () => {
    const player = await makePlayer({ options: { downloads: true } });
    const listener = await viewOf(player.id);
    expect(urlsOf(listener).every((url) => new URL(url).searchParams.get('as') === 'listener')).toBe(true);
    const member = await viewOf(player.id, (await t.as(OWNER)).token);
    expect(member.access.viewer.kind).toBe('member');
    expect(urlsOf(member).length).toBeGreaterThan(0);
    expect(urlsOf(member).every((url) => new URL(url).searchParams.get('as') === 'member')).toBe(true);
    // Another player of the same project never gets this player's tracks either.
    const another = await makePlayer({ options: { downloads: true } });
    expect(urlsOf(await viewOf(another.id)).every((url) => new URL(url).searchParams.get('player') === another.id)).toBe(true);
  });

  it('lets no one in whom the player no longer lets in, cached tracks or not', async () => {
    const player = await makePlayer();
    await viewOf(player.id);
    const { api } = await t.as(OWNER);
    expect((await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { public: false } })).error).toBeUndefined();
    const refused = await t.fetch(`/players/${player.id}/view`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(fileids[0]);
  });

  it("shows an uploader's new display name at once, though it has no version", async () => {
    const player = await makePlayer({ options: { boxSubtitle: 'artist' } });
    const { api } = await t.as(OWNER);
    expect((await api.POST('/me', { body: { name: 'First Name' } })).error).toBeUndefined();
    expect((await viewOf(player.id)).tracks.map((track) => track.subtitle)).toContain('First Name');
    expect((await api.POST('/me', { body: { name: 'Second Name' } })).error).toBeUndefined();
    const subtitles = (await viewOf(player.id)).tracks.map((track) => track.subtitle);
    expect(subtitles).toContain('Second Name');
    expect(subtitles).not.toContain('First Name');
  });

  it('signs new URLs once the window is past: a view never carries URLs that expire sooner than the window allows', async () => {
    const player = await makePlayer({ options: { downloads: true } });
    const ttl = t.server.ctx.config.downloadUrlTtlMs;
    const window = reuseWindowMs(ttl);
    const first = await viewOf(player.id);
    t.server.clock.advance(window);
    const later = await viewOf(player.id);
    expect(later.urlsExpire).toBeGreaterThan(first.urlsExpire);
    expect(urlsOf(later)).not.toEqual(urlsOf(first));
    // A view's URLs expire at least ttl - window after it is answered, and never after ttl.
    const now = t.server.clock.now();
    expect(later.urlsExpire).toBeGreaterThan(now + ttl - window);
    expect(later.urlsExpire).toBeLessThanOrEqual(now + ttl);
  });
});

describe('the view sent without response validation', () => {
  const t = useTestServer('sqlite', { VALIDATE_RESPONSES: 'false' });

  it('is the JSON of a view, with its headers, tracks and urlsExpire last as in the schema', async () => {
    const { api } = await t.as(OWNER);
    const { data: project } = await api.POST('/projects', { body: { name: 'Plain «naïve» ✓' } });
    await api.uploadFile(project!.id, { name: 'über-take ♪.wav', mimeType: 'audio/wav' }, Buffer.from('RIFF....WAVE'));
    const { data: player } = await api.POST('/players', { body: { name: 'Plain', projectid: project!.id, public: true, options: { downloads: true } } });
    for (let read = 0; read < 2; read++) {
      const response = await t.fetch(`/players/${player!.id}/view`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('private, no-store');
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      const view = JSON.parse(bytes.toString('utf8')) as View;
      expect(Object.keys(view).slice(-2)).toEqual(['tracks', 'urlsExpire']);
      expect(view).toMatchObject({ object: 'player-view', projectName: 'Plain «naïve» ✓' });
      expect(view.tracks[0].versions[0]).toMatchObject({ name: 'über-take ♪.wav', download: { filename: 'über-take ♪.wav' } });
      expect((await fetch(view.tracks[0].versions[0].download!.url)).status).toBe(200);
    }
  });
});

describe('ViewTracksCache', () => {
  const entry = (bytes: number, madeAt = 0): TracksEntry => ({ json: Buffer.alloc(bytes, 0x20), urlsExpire: madeAt + 3_600_000, madeAt, uploaderNames: [] });

  it('serves an entry for the window only, from when it was made, and not to a clock that went back', () => {
    const cache = new ViewTracksCache();
    const ttl = 3_600_000;
    expect(reuseWindowMs(ttl)).toBe(60_000);
    expect(reuseWindowMs(15_000)).toBe(250);
    cache.set('k', entry(10, 1_000));
    expect(cache.get('k', 1_000 + 59_999, ttl)).toBeDefined();
    expect(cache.get('k', 999, ttl)).toBeUndefined();
    cache.set('k', entry(10, 1_000));
    expect(cache.get('k', 1_000 + 60_000, ttl)).toBeUndefined();
    // An entry past its window is dropped, not kept.
    expect(cache.size).toBe(0);
  });

  it('makes an entry once for listeners who ask at once, and again when what it was made from without a version changed', async () => {
    const cache = new ViewTracksCache();
    let makes = 0;
    let finish: (entry: TracksEntry) => void = () => {};
    const make = () => {
      makes++;
      return new Promise<TracksEntry>((resolve) => (finish = resolve));
    };
    const asking = [1, 2, 3].map(() => cache.obtain('k', 0, 3_600_000, async () => true, make));
    finish(entry(10));
    const answers = await Promise.all(asking);
    expect(makes).toBe(1);
    expect(new Set(answers).size).toBe(1);
    expect(await cache.obtain('k', 1, 3_600_000, async () => true, make)).toBe(answers[0]);
    expect(makes).toBe(1);
    const remade = cache.obtain('k', 2, 3_600_000, async () => false, make);
    // obtain asks stillTrue first, then makes: wait for that (microtasks, no time).
    while (makes < 2) await Promise.resolve();
    finish(entry(20, 2));
    expect((await remade).json.byteLength).toBe(20);
    expect(makes).toBe(2);
  });

  it('keeps within its byte budget, forgetting the least recently used first', () => {
    const cache = new ViewTracksCache(100);
    cache.set('a', entry(40));
    cache.set('b', entry(40));
    expect(cache.get('a', 0, 3_600_000)).toBeDefined();
    cache.set('c', entry(40));
    expect(cache.get('b', 0, 3_600_000)).toBeUndefined();
    expect(cache.get('a', 0, 3_600_000)).toBeDefined();
    expect(cache.get('c', 0, 3_600_000)).toBeDefined();
    // One larger than the whole budget is not kept, and pushes nothing out.
    cache.set('huge', entry(101));
    expect(cache.get('huge', 0, 3_600_000)).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});
