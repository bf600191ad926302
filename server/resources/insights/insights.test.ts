/**
 * Listener insights over HTTP on both stores: plays reported as the player
 * page reports them (counted once 3 s are heard, the largest report kept),
 * bounded by the file and the view's own access decision; downloads counted
 * as the view's download URLs are served; purchases; and who may read them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { sineWav } from '../../testing/audio.ts';
import { waitForStatus } from '../../testing/files.ts';
import { PLAY_REPORTS } from './insights-handlers.ts';
import { recordPlay } from './insights-service.ts';
import type { Listener } from '../listening/listener.ts';

const OWNER = 'insights.owner@example.com';
type Insights = Schemas['PlayerInsights'];

/** The session cookie a response sets, as a Cookie header value (name=value). */
const sessionCookieOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .find((cookie) => cookie.startsWith('as_player_session='))
    ?.split(';')[0];

let plays = 0;
/** A fresh play id, as the page makes one per play of a track. */
const newPlayId = () => `play-${process.pid}-${Date.now()}-${++plays}`.padEnd(16, '0');

describe.each(backends)('listener insights on %s', (backend) => {
  const t = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  let projectid: string;
  let toneId: string;
  let otherId: string;

  const origin = () => new URL(t.server.ctx.config.publicUrl).origin;
  const report = (playerid: string, body: object, cookie?: string) =>
    t.fetch(`/players/${playerid}/plays`, { ...json(body), headers: { 'Content-Type': 'application/json', ...(cookie ? { Cookie: cookie } : {}) } });
  const insights = async (playerid: string, token?: string) => {
    const response = await t.fetch(`/players/${playerid}/insights`, { token: token ?? (await t.as(OWNER)).token });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as Insights;
  };
  const openSession = async (playerid: string, name: string) => {
    const response = await t.fetch(`/players/${playerid}/session`, { ...json({ name }), headers: { 'Content-Type': 'application/json', Origin: origin() } });
    expect(response.status).toBe(200);
    return sessionCookieOf(response)!;
  };
  const makePlayer = async (body: Partial<Schemas['CreatePlayerRequest']> = {}) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Insights', projectid, boxids: [toneId], public: true, ...body } });
    expect(error).toBeUndefined();
    return data!;
  };

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    projectid = (await api.POST('/projects', { body: { name: 'Insights' } })).data!.id;
    toneId = (await api.uploadFile(projectid, { name: 'tone.wav', mimeType: 'audio/wav' }, await sineWav(8))).data!.box.id;
    otherId = (await api.uploadFile(projectid, { name: 'other.wav', mimeType: 'audio/wav' }, await sineWav(2, 440))).data!.box.id;
    expect((await waitForStatus(api, projectid, toneId)).duration).toBeCloseTo(8, 1);
    await waitForStatus(api, projectid, otherId);
  });

  it('counts a play once 3 s are heard, keeps the largest report of it, and names the listener by their session or Anonymous', async () => {
    const player = await makePlayer();
    const anonymous = newPlayId();
    const short = await report(player.id, { playid: anonymous, fileid: toneId, heard: 1.5, position: 1.5 });
    expect(short.status, await short.clone().text()).toBe(200);
    expect(short.headers.get('cache-control')).toBe('private, no-store');
    expect(await short.json()).toEqual({ object: 'play', playid: anonymous, fileid: toneId, heard: 1.5, position: 1.5, counted: false });
    expect((await insights(player.id)).totals.plays).toBe(0);

    expect(await (await report(player.id, { playid: anonymous, fileid: toneId, heard: 3, position: 6 })).json()).toMatchObject({ heard: 3, position: 6, counted: true });
    // A late report of less (sent before the one above, arrived after) lowers nothing.
    expect(await (await report(player.id, { playid: anonymous, fileid: toneId, heard: 2, position: 2 })).json()).toMatchObject({ heard: 3, position: 6, counted: true });

    const alex = await openSession(player.id, 'Alex (A&R)');
    for (const position of [8, 4]) expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 4, position }, alex)).status).toBe(200);
    // Under 3 s: kept, not counted.
    expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 2.9, position: 2.9 }, alex)).status).toBe(200);

    const seen = await insights(player.id);
    expect(seen).toMatchObject({ object: 'player-insights', playerid: player.id, totals: { plays: 3, listeners: 2, downloads: 0, purchases: 0, amount: 0 } });
    expect(seen.tracks).toHaveLength(1);
    const [track] = seen.tracks;
    expect(track).toMatchObject({ fileid: toneId, name: 'tone.wav', plays: 3, downloads: 0 });
    expect(track.duration).toBeCloseTo(8, 1);
    expect(track.listeners.map(({ name, anonymous, plays, farthest }) => ({ name, anonymous, plays, farthest }))).toEqual([
      { name: 'Alex (A&R)', anonymous: false, plays: 2, farthest: 8 },
      { name: 'Anonymous', anonymous: true, plays: 1, farthest: 6 },
    ]);
    expect(track.listeners[0].fraction).toBeCloseTo(1, 2);
    expect(track.listeners[1].fraction).toBeCloseTo(6 / track.duration!, 3);
    expect(seen.listeners.map(({ name, plays }) => [name, plays])).toEqual([
      ['Alex (A&R)', 2],
      ['Anonymous', 1],
    ]);
    expect(seen.purchases).toEqual({ count: 0, amount: 0, currency: 'usd' });
  });

  it('tells listeners apart by who they are, never by the name they typed: two guests of one name, and a guest who types a member\'s', async () => {
    // Issue 28: "a guest named like a member is a separate guest row"; "two guests with the same name stay two rows".
    const player = await makePlayer();
    const { token } = await t.as('insights.alex@example.com');
    const member = (await t.server.ctx.store.users.findByEmail('insights.alex@example.com'))!;
    await t.server.ctx.store.users.setName(member.id, 'Alex');
    const asMember = (body: object) => t.fetch(`/players/${player.id}/plays`, { ...json(body), token });
    for (let play = 0; play < 3; play++) expect((await asMember({ playid: newPlayId(), fileid: toneId, heard: 4, position: 7 })).status).toBe(200);
    const [first, second] = [await openSession(player.id, 'Alex'), await openSession(player.id, 'Alex')];
    for (let play = 0; play < 2; play++) expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 4, position: 5 }, first)).status).toBe(200);
    expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 4, position: 4 }, second)).status).toBe(200);

    const seen = await insights(player.id);
    expect(seen.totals).toMatchObject({ plays: 6, listeners: 3 });
    expect(seen.listeners.map(({ name, signedIn, anonymous, plays }) => ({ name, signedIn, anonymous, plays }))).toEqual([
      { name: 'Alex', signedIn: true, anonymous: false, plays: 3 },
      { name: 'Alex', signedIn: false, anonymous: false, plays: 2 },
      { name: 'Alex', signedIn: false, anonymous: false, plays: 1 },
    ]);
    const ids = seen.listeners.map((listener) => listener.listenerid);
    expect(new Set(ids).size).toBe(3);
    // A track's rows are the same listeners, under the same ids, each with their own farthest position.
    expect(seen.tracks[0].listeners.map(({ listenerid, signedIn, plays, farthest }) => ({ listenerid, signedIn, plays, farthest }))).toEqual([
      { listenerid: ids[0], signedIn: true, plays: 3, farthest: 7 },
      { listenerid: ids[1], signedIn: false, plays: 2, farthest: 5 },
      { listenerid: ids[2], signedIn: false, plays: 1, farthest: 4 },
    ]);
    // The id is no account's nor session's, and another player's is another.
    for (const id of ids) expect(id).not.toContain(member.id);
    const other = await makePlayer();
    expect((await t.fetch(`/players/${other.id}/plays`, { ...json({ playid: newPlayId(), fileid: toneId, heard: 4, position: 4 }), token })).status).toBe(200);
    expect((await insights(other.id)).listeners[0]).toMatchObject({ name: 'Alex', signedIn: true });
    expect((await insights(other.id)).listeners[0].listenerid).not.toBe(ids[0]);
  });

  it('a renewed player session stays one listener: its plays under its former id are taken over', async () => {
    const player = await makePlayer();
    const record = (listener: object, playid = newPlayId()) =>
      recordPlay(t.server.ctx, { player, permissions: new Set(['player:stream']), fileIds: new Set([toneId]), projectBoxes: boxes, canModerate: false, ...listener } as unknown as Listener, {
        playid,
        fileid: toneId,
        heard: 4,
        position: 4,
      });
    const boxes = await t.server.ctx.store.boxes.listProject(projectid);
    await record({ sessionId: 'pss_before', displayName: 'Robin' });
    // The same browser after it paid (the session renewed): the plays under its former id are its own.
    await record({ sessionId: 'pss_after', formerSessionIds: ['pss_before'], displayName: 'Robin' });
    expect((await insights(player.id)).listeners.map(({ name, plays }) => [name, plays])).toEqual([['Robin', 2]]);
    // Then it took an invite for an account: the guest's plays become the account's.
    const account = (await t.server.ctx.store.users.findOrCreate('insights.robin@example.com', Date.now()))!;
    await record({ sessionId: 'pss_member', formerSessionIds: ['pss_after', 'pss_before'], userId: account.id, displayName: 'Robin R.' });
    expect((await insights(player.id)).listeners.map(({ name, signedIn, plays }) => [name, signedIn, plays])).toEqual([['Robin R.', true, 3]]);
  });

  it('keeps nothing of a listener but the name they gave and a digest of their session: no address, user agent or session id', async () => {
    const player = await makePlayer();
    const cookie = await openSession(player.id, 'Sam');
    const playid = newPlayId();
    const response = await t.fetch(`/players/${player.id}/plays`, {
      ...json({ playid, fileid: toneId, heard: 5, position: 5 }),
      headers: { 'Content-Type': 'application/json', Cookie: cookie, 'User-Agent': 'Fingerprintable/1.0', 'X-Forwarded-For': '203.0.113.9' },
    });
    expect(response.status).toBe(200);
    const rows = await t.server.ctx.store.db.query('SELECT * FROM player_plays WHERE player_id = $1', [player.id]);
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0]).sort()).toEqual(['file_id', 'heard', 'listener_key', 'listener_name', 'play_id', 'player_id', 'position', 'time_created', 'time_modified']);
    const stored = JSON.stringify(rows[0]);
    // The guest is told apart by their session, kept as a digest only: not its id, which the cookie carries.
    const sessionId = JSON.parse(Buffer.from(cookie.split('=')[1].split('.')[0], 'base64url').toString()).id as string;
    for (const trace of ['Fingerprintable', '203.0.113.9', '127.0.0.1', cookie.split('=')[1].slice(0, 20), sessionId]) expect(stored).not.toContain(trace);
    expect(rows[0].listener_name).toBe('Sam');
    expect(rows[0].listener_key).toMatch(/^guest:[A-Za-z0-9_-]{43}$/);
  });

  it('refuses reports past the duration, of files outside the player, under another file\'s play id, and malformed ones', async () => {
    const player = await makePlayer();
    const tooFar = await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 19, position: 3 });
    expect(tooFar.status).toBe(400);
    expect(await tooFar.json()).toMatchObject({ type: '/problems/validation-error', detail: expect.stringContaining('heard may be at most'), errors: [{ pointer: '/heard' }] });
    expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 3, position: 18.5 })).status).toBe(400);
    // Within the slack: a page's clock runs a little past the end.
    expect((await report(player.id, { playid: newPlayId(), fileid: toneId, heard: 9, position: 9 })).status).toBe(200);

    const outside = await report(player.id, { playid: newPlayId(), fileid: otherId, heard: 3, position: 3 });
    expect(outside.status).toBe(404);
    expect((await outside.json()).detail).toContain(otherId);

    const playid = newPlayId();
    expect((await report(player.id, { playid, fileid: toneId, heard: 4, position: 4 })).status).toBe(200);
    const both = await makePlayer({ boxids: [toneId, otherId] });
    expect((await report(both.id, { playid, fileid: toneId, heard: 4, position: 4 })).status).toBe(200);
    expect((await report(both.id, { playid, fileid: otherId, heard: 2, position: 2 })).status).toBe(409);

    for (const body of [{ fileid: toneId, heard: 3, position: 3 }, { playid: 'short', fileid: toneId, heard: 3, position: 3 }, { playid: newPlayId(), fileid: toneId, heard: -1, position: 3 }]) {
      expect((await report(player.id, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await report('ply_doesnotexist00', { playid: newPlayId(), fileid: toneId, heard: 3, position: 3 })).status).toBe(404);
  });

  it('obeys the view\'s access decision: locked, paywalled and expired players take no reports', async () => {
    const locked = await makePlayer({ password: 'open sesame' });
    const refused = await report(locked.id, { playid: newPlayId(), fileid: toneId, heard: 4, position: 4 });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: '/problems/player-locked', lock: 'password' });

    const { api } = await t.as(OWNER);
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_InsightsOwner01' } });
    const paywalled = await makePlayer({ payment: { price: 499, fulfillment: 'allow-access', recipient: 'customer' } });
    const held = await report(paywalled.id, { playid: newPlayId(), fileid: toneId, heard: 4, position: 4 });
    expect(held.status).toBe(403);
    expect((await held.json()).detail).toContain('access.stream');

    const expired = await makePlayer({ expires: t.server.clock.now() + 60_000 });
    t.server.clock.advance(61_000);
    expect((await report(expired.id, { playid: newPlayId(), fileid: toneId, heard: 4, position: 4 })).status).toBe(410);
    for (const player of [locked, paywalled]) expect((await insights(player.id)).totals.plays).toBe(0);
  });

  it('counts downloads through the view when their bytes are sent from the start, and purchases with their amounts', async () => {
    const player = await makePlayer({ options: { downloads: true } });
    const viewed = await t.fetch(`/players/${player.id}/view`);
    const version = ((await viewed.json()) as Schemas['PlayerView']).tracks[0].versions[0];
    const url = version.download!.url;
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    const etag = whole.headers.get('etag')!;
    await whole.arrayBuffer();
    expect((await insights(player.id)).totals.downloads).toBe(1);
    // What sends nothing anew counts nothing: a 304 (the listener has the file), a resumed range, a stream of the same file.
    expect((await fetch(url, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const resumed = await fetch(url, { headers: { Range: 'bytes=100-' } });
    expect(resumed.status).toBe(206);
    await resumed.arrayBuffer();
    await (await fetch(version.streams!.compressed!)).arrayBuffer();
    expect((await insights(player.id)).totals.downloads).toBe(1);
    // A download manager's first range, from byte 0, is a download.
    const ranged = await fetch(url, { headers: { Range: 'bytes=0-' } });
    expect(ranged.status).toBe(206);
    await ranged.arrayBuffer();

    const now = t.server.clock.now();
    await t.server.ctx.store.purchases.recordCheckout({ id: 'pur_insights01', playerId: player.id, timeCreated: now, checkoutId: 'cs_insights01', amount: 499, currency: 'usd' });
    await t.server.ctx.store.purchases.recordCheckout({ id: 'pur_insights02', playerId: player.id, timeCreated: now, checkoutId: 'cs_insights02', amount: 999, currency: 'usd' });
    const seen = await insights(player.id);
    expect(seen.totals).toMatchObject({ downloads: 2, purchases: 2, amount: 1498 });
    expect(seen.tracks[0]).toMatchObject({ fileid: toneId, downloads: 2 });
    expect(seen.purchases).toEqual({ count: 2, amount: 1498, currency: 'usd' });
  });

  it('shows insights to who may manage the player: editors yes, viewers 403, anyone else 404', async () => {
    const player = await makePlayer({ collaborators: [{ email: 'insights.editor@example.com', role: 'editor' }, { email: 'insights.viewer@example.com', role: 'viewer' }] });
    expect((await insights(player.id, (await t.as('insights.editor@example.com')).token)).playerid).toBe(player.id);
    const viewer = await t.fetch(`/players/${player.id}/insights`, { token: (await t.as('insights.viewer@example.com')).token });
    expect(viewer.status).toBe(403);
    const stranger = await t.fetch(`/players/${player.id}/insights`, { token: (await t.as('insights.stranger@example.com')).token });
    expect(stranger.status).toBe(404);
    expect((await t.fetch(`/players/${player.id}/insights`)).status).toBe(401);
  });

  it('limits reports per player session', async () => {
    const player = await makePlayer();
    const cookie = await openSession(player.id, 'Busy');
    const playid = newPlayId();
    for (let i = 0; i < PLAY_REPORTS.points; i++) expect((await report(player.id, { playid, fileid: toneId, heard: 4, position: 4 }, cookie)).status).toBe(200);
    const over = await report(player.id, { playid, fileid: toneId, heard: 4, position: 4 }, cookie);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
