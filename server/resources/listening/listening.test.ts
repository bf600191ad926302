/**
 * The listener's side of a player, over HTTP on both stores: the view and
 * what it holds per option and per listener, player sessions (invite links
 * once, passwords with their rate limit, display names), collaborators-only,
 * expired and paywalled players, and signed URLs that stop working when the
 * player stops allowing what they were made for.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer, type Harness } from '../../testing/harness.ts';
import { makeAudio } from '../../testing/audio.ts';
import { waitForStatus } from '../../testing/files.ts';
import { listenerSessions } from './listener.ts';
import { LISTENER_SESSION_TTL_MS } from './listener-session.ts';
import { PASSWORD_ATTEMPTS } from './session-service.ts';

const OWNER = 'owner.secret.name@example.com';

type View = Schemas['PlayerView'];

/** The session cookie a response sets, as a Cookie header value (name=value), or undefined. */
function sessionCookieOf(response: Response): string | undefined {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith('as_player_session='));
  return line?.split(';')[0];
}

describe.each(backends)('listening on %s', (backend) => {
  const t = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  let projectid: string;
  let stackid: string;
  let flacId: string;
  let wavId: string;
  let textId: string;

  const origin = () => new URL(t.server.ctx.config.publicUrl).origin;
  const view = (playerid: string, init: { cookie?: string; token?: string } = {}) =>
    t.fetch(`/players/${playerid}/view`, { token: init.token, headers: init.cookie ? { Cookie: init.cookie } : {} });
  const viewJson = async (playerid: string, init: { cookie?: string; token?: string } = {}) => {
    const response = await view(playerid, init);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as View;
  };
  /** Opens a session from the player's own page (an Origin header equal to the server's). */
  const openSession = (playerid: string, body: object, cookie?: string, headers: Record<string, string> = { Origin: origin() }) =>
    t.fetch(`/players/${playerid}/session`, { ...json(body), headers: { 'Content-Type': 'application/json', ...headers, ...(cookie ? { Cookie: cookie } : {}) } });
  const makePlayer = async (body: Record<string, unknown>) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Listen', projectid, ...body } as Schemas['CreatePlayerRequest'] });
    expect(error).toBeUndefined();
    return data!;
  };
  const update = async (playerid: string, body: Schemas['UpdatePlayerRequest']) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players/{playerid}', { params: { path: { playerid } }, body });
    expect(error).toBeUndefined();
    return data!;
  };
  const fetchSigned = (url: string) => fetch(url);

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_Listening001' } });
    const { data: project } = await api.POST('/projects', { body: { name: 'Night Drive EP' } });
    projectid = project!.id;
    const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1', '-ac', '2'];
    const flac = await makeAudio('v1.flac', [
      ...tone, '-c:a', 'flac',
      '-metadata', 'title=Night Drive', '-metadata', 'artist=The Late Shift', '-metadata', 'album=Spring EP', '-metadata', 'ISRC=GBAYE2500001',
    ]);
    const first = (await api.uploadFile(projectid, { name: 'night-drive-v1.flac', mimeType: 'audio/flac' }, flac)).data!;
    stackid = first.upload.stackid;
    flacId = first.box.id;
    // The newest version: no tags, so its subtitle falls back (to no subtitle, as its uploader has no display name yet).
    const wav = await makeAudio('v2.wav', [...tone, '-c:a', 'pcm_s16le']);
    const second = (await api.uploadFile(projectid, { name: 'night-drive-v2.wav', mimeType: 'audio/wav', parentid: stackid }, wav)).data!;
    wavId = second.box.id;
    const text = (await api.uploadFile(projectid, { name: 'lyrics.txt', mimeType: 'text/plain' }, Buffer.from('la la la'))).data!;
    textId = text.box.id;
    await waitForStatus(api, projectid, flacId);
    await waitForStatus(api, projectid, wavId);
  });

  describe('the view', () => {
    it('lists tracks with their versions, newest first with stacks on, and signed URLs for every quality the file has', async () => {
      const player = await makePlayer({ options: { stacks: true, metadata: true, isrc: true, loudnessMatch: true } });
      const body = await viewJson(player.id);
      expect(body).toMatchObject({ object: 'player-view', id: player.id, name: 'Listen', projectName: 'Night Drive EP', qualities: ['original', 'lossless', 'compressed'] });
      expect(body.access).toMatchObject({ state: 'open', stream: true, download: true, comment: true, viewer: { kind: 'listener' } });
      expect(body.options).toMatchObject({ loudnessMatch: true, targetLufs: -14, metadata: true, isrc: true, boxSubtitle: 'artist' });
      const stack = body.tracks.find((track) => track.id === stackid)!;
      expect(stack.versions.map((version) => version.id)).toEqual([wavId, flacId]);
      const [wav, flac] = stack.versions;
      expect(flac).toMatchObject({
        name: 'night-drive-v1.flac',
        status: 'ready',
        tags: { title: 'Night Drive', artist: 'The Late Shift', album: 'Spring EP' },
        isrc: 'GBAYE2500001',
        download: { filename: 'night-drive-v1.flac' },
      });
      expect(flac.loudness!.integratedLufs).toBeLessThan(0);
      expect(flac.duration).toBeCloseTo(1, 1);
      expect(Object.keys(flac.streams!).sort()).toEqual(['compressed', 'lossless', 'original']);
      expect(wav).not.toHaveProperty('tags');
      // Every URL in the view works, until urlsExpire.
      expect(body.urlsExpire).toBeGreaterThan(Date.now());
      for (const url of [flac.streams!.lossless!, flac.streams!.compressed!, flac.streams!.original!, flac.peaks!.json, flac.peaks!.dat, flac.download!.url]) {
        const response = await fetchSigned(url);
        expect(response.status, url).toBe(200);
        await response.arrayBuffer();
      }
      const lossless = await fetchSigned(flac.streams!.lossless!);
      expect(lossless.headers.get('content-type')).toBe('audio/flac');
      await lossless.arrayBuffer();
      // A file that is not audio is a track (its own stack, named after the file without its extension) with no
      // stream, offered as a download under the file's own name.
      const lyrics = body.tracks.find((track) => track.versions[0].id === textId)!;
      expect(lyrics.name).toBe('lyrics');
      expect(lyrics.versions[0]).not.toHaveProperty('streams');
      expect(lyrics.versions[0].download!.filename).toBe('lyrics.txt');
    });

    it('holds only the newest version with stacks off, no tags or ISRC unless asked, and the subtitle the player asks for', async () => {
      const plain = await viewJson((await makePlayer({ options: { stacks: false, boxSubtitle: 'artist' } })).id);
      const stack = plain.tracks.find((track) => track.id === stackid)!;
      expect(stack.versions.map((version) => version.id)).toEqual([wavId]);
      expect(stack.versions[0]).not.toHaveProperty('tags');
      expect(stack.versions[0]).not.toHaveProperty('isrc');
      // The newest version has no artist tag and its uploader no display name: no subtitle, never a part of an email.
      expect(stack).not.toHaveProperty('subtitle');
      expect(JSON.stringify(plain)).not.toMatch(/owner\.secret|@/);

      const oneFile = await viewJson((await makePlayer({ boxids: [flacId], options: { boxSubtitle: 'artist', metadata: false } })).id);
      expect(oneFile.tracks).toHaveLength(1);
      expect(oneFile.tracks[0]).toMatchObject({ id: flacId, subtitle: 'The Late Shift' });
      expect(oneFile.tracks[0].versions[0]).not.toHaveProperty('tags');

      const stamped = await viewJson((await makePlayer({ options: { boxSubtitle: 'timestamp' } })).id);
      expect(stamped.tracks.find((track) => track.id === stackid)!.subtitle).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      const none = await viewJson((await makePlayer({ options: { boxSubtitle: 'none' } })).id);
      expect(none.tracks.every((track) => track.subtitle === undefined)).toBe(true);
    });

    it('resolves the loudness target: the player\'s own, else its platform\'s, else -14', async () => {
      expect((await viewJson((await makePlayer({ options: { loudnessPlatform: 'apple-music' } })).id)).options.targetLufs).toBe(-16);
      expect((await viewJson((await makePlayer({ options: { loudnessPlatform: 'deezer', targetLufs: -20 } })).id)).options.targetLufs).toBe(-20);
      expect((await viewJson((await makePlayer({ options: {} })).id)).options.targetLufs).toBe(-14);
    });

    it('without downloads, streams renditions only: no original, no download, and FLAC as lossless', async () => {
      const player = await makePlayer({ options: { downloads: false, stacks: true, quality: 'original' } });
      const body = await viewJson(player.id);
      expect(body.qualities).toEqual(['lossless', 'compressed']);
      expect(body).not.toHaveProperty('defaultQuality');
      expect(body.access.download).toBe(false);
      for (const version of body.tracks.flatMap((track) => track.versions)) {
        expect(version).not.toHaveProperty('download');
        expect(version.streams ?? {}).not.toHaveProperty('original');
      }
      expect(Object.keys(body.tracks.find((track) => track.id === stackid)!.versions[1].streams!).sort()).toEqual(['compressed', 'lossless']);
    });

    it('stops an original stream URL once downloads are switched off, and keeps its rendition URLs working', async () => {
      const player = await makePlayer({ boxids: [flacId] });
      const { streams } = (await viewJson(player.id)).tracks[0].versions[0];
      await update(player.id, { options: { downloads: false } });
      const original = await fetchSigned(streams!.original!);
      expect(original.status).toBe(403);
      expect((await original.json()).detail).toMatch(/downloading is not allowed/);
      const compressed = await fetchSigned(streams!.compressed!);
      expect(compressed.status).toBe(200);
      await compressed.arrayBuffer();
    });

    it('takes a project member by bearer token, and refuses a bearer token that is not valid', async () => {
      const player = await makePlayer({ public: false });
      const { token } = await t.as(OWNER);
      const body = await viewJson(player.id, { token });
      expect(body.access.viewer).toEqual({ kind: 'member', canModerate: true });
      const bad = await view(player.id, { token: 'not-a-token' });
      expect(bad.status).toBe(401);
      expect(await bad.json()).toMatchObject({ type: '/problems/unauthorized' });
      // RFC 6750 §3 and RFC 9728 §5.1: invalid_token, and where the API's resource metadata is, as the API's own 401s say.
      expect(bad.headers.get('www-authenticate')).toBe(`Bearer realm="api", error="invalid_token", resource_metadata="${t.server.address}/.well-known/oauth-protected-resource/api/v1"`);
      expect((await view('ply_doesnotexist')).status).toBe(404);
    });
  });

  describe('collaborators only, and invite links', () => {
    it('answers 401 with the lock, opens with an invite link once, and lets the owner renew and remove', async () => {
      const player = await makePlayer({
        public: false,
        collaborators: [
          { email: 'Mix-Engineer@Studio.test', role: 'editor' },
          { email: 'label@studio.test', role: 'viewer' },
        ],
      });
      const locked = await view(player.id);
      expect(locked.status).toBe(401);
      expect(await locked.json()).toMatchObject({ type: '/problems/player-locked', lock: 'collaborators', status: 401 });
      expect(locked.headers.get('www-authenticate')).toBe(`PlayerSession realm="${player.id}"`);

      const { api } = await t.as(OWNER);
      const { data: invites } = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player.id } } });
      expect(invites!.map((invite) => [invite.email, invite.role, invite.inviteUsed])).toEqual([
        ['mix-engineer@studio.test', 'editor', false],
        ['label@studio.test', 'viewer', false],
      ]);
      // Listing again gives the same links: they are derived, not made anew.
      const { data: again } = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player.id } } });
      expect(again!.map((invite) => invite.inviteUrl)).toEqual(invites!.map((invite) => invite.inviteUrl));
      const tokenOf = (invite: Schemas['CollaboratorInvite']) => new URL(invite.inviteUrl).searchParams.get('invite')!;

      const opened = await openSession(player.id, { invite: tokenOf(invites![0]) });
      expect(opened.status).toBe(200);
      const setCookie = opened.headers.getSetCookie().find((line) => line.startsWith('as_player_session='))!;
      expect(setCookie).toMatch(new RegExp(`Path=/api/v1/players/${player.id}`));
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).toMatch(/SameSite=Lax/);
      expect(setCookie).toMatch(/Max-Age=86400/);
      expect((await opened.json()).access.viewer).toEqual({ kind: 'member', canModerate: true });
      const editorCookie = sessionCookieOf(opened)!;
      expect((await viewJson(player.id, { cookie: editorCookie })).access.viewer.kind).toBe('member');
      // The session is no API token.
      expect((await t.fetch('/players', { headers: { Cookie: editorCookie } })).status).toBe(401);

      // Used once; a second use is refused.
      const reused = await openSession(player.id, { invite: tokenOf(invites![0]) });
      expect(reused.status).toBe(403);
      expect(await reused.json()).toMatchObject({ type: '/problems/invite-invalid' });
      expect((await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player.id } } })).data![0].inviteUsed).toBe(true);

      // Renewing a link kills the old one at once.
      const { data: renewed } = await api.POST('/players/{playerid}/collaborators/{email}/invite', {
        params: { path: { playerid: player.id, email: 'LABEL@studio.test' } },
      });
      expect(renewed).toMatchObject({ email: 'label@studio.test', inviteUsed: false });
      expect(renewed!.inviteUrl).not.toBe(invites![1].inviteUrl);
      expect((await openSession(player.id, { invite: tokenOf(invites![1]) })).status).toBe(403);
      const viewerSession = await openSession(player.id, { invite: tokenOf(renewed!) });
      expect(viewerSession.status).toBe(200);
      expect((await viewerSession.json()).access.viewer).toEqual({ kind: 'member', canModerate: false });

      // Removing the editor ends their session at its next request.
      expect((await api.DELETE('/players/{playerid}/collaborators/{email}', { params: { path: { playerid: player.id, email: 'mix-engineer@studio.test' } } })).error).toBeUndefined();
      const ended = await view(player.id, { cookie: editorCookie });
      expect(ended.status).toBe(401);
      expect((await ended.json()).lock).toBe('collaborators');
      const gone = await api.DELETE('/players/{playerid}/collaborators/{email}', { params: { path: { playerid: player.id, email: 'mix-engineer@studio.test' } } });
      expect(gone.response.status).toBe(404);
      // A viewer of the project may not manage collaborators.
      const viewerApi = (await t.as('label@studio.test')).api;
      expect((await viewerApi.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player.id } } })).response.status).toBe(403);
    });

    it('refuses a session from another site, or from nowhere, with 403', async () => {
      const player = await makePlayer({});
      for (const headers of [{ 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'https://evil.example' }, {} as Record<string, string>]) {
        const refused = await openSession(player.id, { name: 'Alex' }, undefined, headers);
        expect(refused.status, JSON.stringify(headers)).toBe(403);
        expect(sessionCookieOf(refused)).toBeUndefined();
      }
      expect((await openSession(player.id, { name: 'Alex' }, undefined, { 'Sec-Fetch-Site': 'same-origin' })).status).toBe(200);
    });
  });

  describe('passwords, names and sessions', () => {
    it('stores the password hashed, opens with the right one, refuses a wrong one, and ends sessions when it changes', async () => {
      const player = await makePlayer({ password: 'night-drive-2026' });
      expect(player.hasPassword).toBe(true);
      expect(JSON.stringify(player)).not.toContain('night-drive-2026');
      const stored = (await t.server.ctx.store.players.get(player.id))!.passwordHash!;
      expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(stored).not.toContain('night-drive-2026');

      const locked = await view(player.id);
      expect(locked.status).toBe(401);
      expect(await locked.json()).toMatchObject({ type: '/problems/player-locked', lock: 'password' });
      const wrong = await openSession(player.id, { password: 'night-drive-2025' });
      expect(wrong.status).toBe(403);
      expect(await wrong.json()).toMatchObject({ type: '/problems/password-incorrect' });
      const right = await openSession(player.id, { password: 'night-drive-2026' });
      expect(right.status).toBe(200);
      expect((await right.json()).access.viewer).toEqual({ kind: 'password' });
      const cookie = sessionCookieOf(right)!;
      expect((await viewJson(player.id, { cookie })).access.stream).toBe(true);

      // The session gains a name and keeps its password.
      const named = await openSession(player.id, { name: '  Alex (A&R) ' }, cookie);
      expect(named.status).toBe(200);
      const namedCookie = sessionCookieOf(named)!;
      expect((await viewJson(player.id, { cookie: namedCookie })).access.viewer).toEqual({ kind: 'password', name: 'Alex (A&R)' });

      await update(player.id, { password: 'a-new-password' });
      expect((await view(player.id, { cookie: namedCookie })).status).toBe(401);
      const removed = await update(player.id, { password: null });
      expect(removed.hasPassword).toBe(false);
      expect((await view(player.id)).status).toBe(200);
    });

    it(`rate limits password attempts per address and player: ${PASSWORD_ATTEMPTS.points} a minute, then 429`, async () => {
      const player = await makePlayer({ password: 'right-password' });
      for (let attempt = 0; attempt < PASSWORD_ATTEMPTS.points; attempt++) {
        expect((await openSession(player.id, { password: `wrong-${attempt}` })).status).toBe(403);
      }
      const limited = await openSession(player.id, { password: 'right-password' });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another player's password is counted apart.
      const other = await makePlayer({ password: 'right-password' });
      expect((await openSession(other.id, { password: 'right-password' })).status).toBe(200);
    });

    it('gives a listener a display name, closes the session, and takes no password on a player without one', async () => {
      const player = await makePlayer({});
      const opened = await openSession(player.id, { name: 'Sam' });
      const cookie = sessionCookieOf(opened)!;
      expect((await viewJson(player.id, { cookie })).access.viewer).toEqual({ kind: 'listener', name: 'Sam' });
      const closed = await t.fetch(`/players/${player.id}/session`, { method: 'DELETE', headers: { Origin: origin(), Cookie: cookie } });
      expect(closed.status).toBe(200);
      const cleared = closed.headers.getSetCookie()[0];
      expect(cleared).toMatch(/^as_player_session=;/);
      expect(cleared).toMatch(/Max-Age=0/);
      expect(cleared).toMatch(new RegExp(`Path=/api/v1/players/${player.id}`));
      expect((await openSession(player.id, { password: 'anything' })).status).toBe(403);
      // A session cookie of another player is no session here.
      const elsewhere = await makePlayer({});
      expect((await viewJson(elsewhere.id, { cookie })).access.viewer).toEqual({ kind: 'listener' });
    });
  });

  describe('expiry and deletion', () => {
    it('answers 410 once the player expires, echoes expires, and opens again when it is removed', async () => {
      const expires = t.server.clock.now() + 60_000;
      const player = await makePlayer({ expires });
      expect(player.expires).toBe(expires);
      expect((await view(player.id)).status).toBe(200);
      const { streams } = (await viewJson(player.id)).tracks[0].versions[0];
      t.server.clock.advance(61_000);
      const expired = await view(player.id);
      expect(expired.status).toBe(410);
      expect(await expired.json()).toMatchObject({ type: '/problems/player-expired' });
      expect((await openSession(player.id, { name: 'Late' })).status).toBe(410);
      expect((await fetchSigned(streams!.compressed!)).status).toBe(403);
      const reopened = await update(player.id, { expires: null });
      expect(reopened).not.toHaveProperty('expires');
      expect((await view(player.id)).status).toBe(200);
    });

    it('deletes a player for its owner: its link, sessions, invites and signed URLs go with it', async () => {
      const player = await makePlayer({ public: false, collaborators: [{ email: 'gone@studio.test', role: 'viewer' }] });
      const { api } = await t.as(OWNER);
      const stranger = (await t.as('stranger@example.com')).api;
      const collaborator = (await t.as('gone@studio.test')).api;
      const { data: invites } = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player.id } } });
      const opened = await openSession(player.id, { invite: new URL(invites![0].inviteUrl).searchParams.get('invite')! });
      const cookie = sessionCookieOf(opened)!;
      const { streams } = (await viewJson(player.id, { cookie })).tracks[0].versions[0];

      expect((await stranger.DELETE('/players/{playerid}', { params: { path: { playerid: player.id } } })).response.status).toBe(404);
      expect((await collaborator.DELETE('/players/{playerid}', { params: { path: { playerid: player.id } } })).response.status).toBe(403);
      const deleted = await api.DELETE('/players/{playerid}', { params: { path: { playerid: player.id } } });
      expect(deleted.data).toEqual({});
      expect((await view(player.id, { cookie })).status).toBe(404);
      expect((await fetchSigned(streams!.compressed!)).status).toBe(403);
      expect((await api.GET('/players/{playerid}', { params: { path: { playerid: player.id } } })).response.status).toBe(404);
      // The role the invitation gave is gone with it.
      expect((await collaborator.GET('/projects/{projectid}', { params: { path: { projectid } } })).response.status).toBe(404);
      expect((await t.server.ctx.store.db.query('SELECT 1 AS found FROM player_collaborators WHERE player_id = $1', [player.id])).length).toBe(0);
    });
  });

  describe('paywall', () => {
    /** A session cookie that holds a purchase, as the checkout of the paywall issue will set it. */
    const purchaserCookie = (playerid: string, purchaseId: string) =>
      `as_player_session=${listenerSessions(t.server.ctx).issue(playerid, { id: 'pss_test', expires: t.server.clock.now() + LISTENER_SESSION_TTL_MS, purchaseId })}`;
    const purchase = (h: Harness, playerId: string, id: string) => h.server.ctx.store.purchases.insert({ id, playerId, timeCreated: h.server.clock.now() });

    it('locks an allow-access player: tracks listed without any URL, and URLs minted before the paywall refused', async () => {
      const player = await makePlayer({ boxids: [flacId] });
      const before = (await viewJson(player.id)).tracks[0].versions[0];
      await update(player.id, { payment: { price: 499, fulfillment: 'allow-access', recipient: 'customer' } });
      const body = await viewJson(player.id);
      expect(body.access).toMatchObject({ state: 'locked', lock: 'paywall', stream: false, download: false, comment: false });
      expect(body.paywall).toEqual({ price: 499, currency: 'usd', fulfillment: 'allow-access', recipient: 'customer', paid: false });
      expect(body.qualities).toEqual([]);
      const version = body.tracks[0].versions[0];
      expect(version.name).toBe('night-drive-v1.flac');
      for (const field of ['streams', 'peaks', 'download']) expect(version).not.toHaveProperty(field);
      for (const url of [before.streams!.compressed!, before.streams!.original!, before.peaks!.json, before.download!.url]) {
        const refused = await fetchSigned(url);
        expect(refused.status, url).toBe(403);
        expect((await refused.json()).type).toBe('/problems/signature-invalid');
      }
      // The owner is no listener: the paywall is not theirs to pay.
      expect((await viewJson(player.id, { token: (await t.as(OWNER)).token })).access.stream).toBe(true);
    });

    it('opens a customer paywall for the purchaser\'s session only, and its URLs stay bound to that purchase', async () => {
      const player = await makePlayer({ boxids: [flacId], payment: { price: 499, fulfillment: 'allow-access', recipient: 'customer' } });
      await purchase(t, player.id, 'pur_customer01');
      expect((await viewJson(player.id)).access.state).toBe('locked');
      const cookie = purchaserCookie(player.id, 'pur_customer01');
      const body = await viewJson(player.id, { cookie });
      expect(body.access).toMatchObject({ state: 'open', stream: true, viewer: { kind: 'purchaser' } });
      expect(body.paywall!.paid).toBe(true);
      const url = body.tracks[0].versions[0].streams!.compressed!;
      expect(new URL(url).searchParams.get('purchase')).toBe('pur_customer01');
      const served = await fetchSigned(url);
      expect(served.status).toBe(200);
      await served.arrayBuffer();
      // A purchase of another player, or none on record, opens nothing.
      expect((await viewJson(player.id, { cookie: purchaserCookie(player.id, 'pur_notonrecord') })).access.state).toBe('locked');
    });

    it('opens an everyone paywall for every listener once anyone has paid', async () => {
      const player = await makePlayer({ boxids: [flacId], payment: { price: 100, fulfillment: 'allow-access', recipient: 'everyone' } });
      expect((await viewJson(player.id)).access.stream).toBe(false);
      await purchase(t, player.id, 'pur_everyone01');
      const body = await viewJson(player.id);
      expect(body.access).toMatchObject({ state: 'open', stream: true, download: true, viewer: { kind: 'purchaser' } });
      const served = await fetchSigned(body.tracks[0].versions[0].download!.url);
      expect(served.status).toBe(200);
      await served.arrayBuffer();
    });

    it('plays an allow-download player but gives no download URL until paid, and refuses download URLs minted before', async () => {
      const player = await makePlayer({ boxids: [flacId] });
      const before = (await viewJson(player.id)).tracks[0].versions[0];
      await update(player.id, { payment: { price: 299, fulfillment: 'allow-download', recipient: 'customer' } });
      const body = await viewJson(player.id);
      expect(body.access).toMatchObject({ state: 'locked', lock: 'paywall', stream: true, download: false });
      // The original is the master the paywall sells, and lossless its very samples: neither is streamed.
      expect(body.qualities).toEqual(['compressed']);
      const version = body.tracks[0].versions[0];
      expect(version).not.toHaveProperty('download');
      expect(Object.keys(version.streams!).sort()).toEqual(['compressed']);
      expect((await fetchSigned(before.download!.url)).status).toBe(403);
      expect((await fetchSigned(before.streams!.original!)).status).toBe(403);
      const stream = await fetchSigned(version.streams!.compressed!);
      expect(stream.status).toBe(200);
      await stream.arrayBuffer();

      await purchase(t, player.id, 'pur_download01');
      const paid = await viewJson(player.id, { cookie: purchaserCookie(player.id, 'pur_download01') });
      expect(paid.access).toMatchObject({ state: 'open', download: true });
      const download = await fetchSigned(paid.tracks[0].versions[0].download!.url);
      expect(download.status).toBe(200);
      await download.arrayBuffer();
    });
  });

  // Last: it gives the owner a display name, which the tests above expect absent.
  it("falls back to the uploader's display name for the subtitle, and names a member by it, never by their email", async () => {
    const { api, token } = await t.as(OWNER);
    expect((await api.POST('/me', { body: { name: 'Jo Producer' } })).error).toBeUndefined();
    const player = await makePlayer({ options: { boxSubtitle: 'artist' } });
    const anonymous = await viewJson(player.id);
    expect(anonymous.tracks.find((track) => track.id === stackid)!.subtitle).toBe('Jo Producer');
    const member = await viewJson(player.id, { token });
    expect(member.access.viewer).toEqual({ kind: 'member', name: 'Jo Producer', canModerate: true });
    expect(JSON.stringify([anonymous, member])).not.toMatch(/owner\.secret|@/);
  });
});
