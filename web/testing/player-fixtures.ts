/**
 * Fixtures for the player page's browser tests (web/player-app.test.ts):
 * projects of real audio made by ffmpeg from exact lavfi signals (1 kHz
 * sines at known peak levels, EBU Tech 3341 style, so a stereo sine at
 * X dBFS measures about X LUFS), analysed by the server, and players over
 * them, open or locked in each way a listener can meet.
 *
 * Everything goes through the API as an integrator would, but for what the
 * API has no operation for yet: a purchase record and the session cookie
 * that carries it (payment itself comes with the paywall issue; until then
 * "unlocked" comes from a purchase record that a test creates).
 *
 * The server must analyse audio for these (LISTENING_SERVER_ENV): the view
 * gives loudness, peaks and renditions only for `ready` files.
 */
import type { Harness } from '../../server/testing/harness.ts';
import { makeAudio, stereoSegments } from '../../server/testing/audio.ts';
import { waitForStatus } from '../../server/testing/files.ts';
import { onePixelPng } from '../../server/testing/fixtures.ts';
import type { Schemas } from '../../generated/client.ts';
import { listenerSessions } from '../../server/resources/listening/listener.ts';
import { LISTENER_SESSION_COOKIE, LISTENER_SESSION_TTL_MS } from '../../server/resources/listening/listener-session.ts';

/** A test server that analyses uploads itself, and soon (jobs polled every 50 ms). */
export const LISTENING_SERVER_ENV = { PROCESSING: 'in-process', JOB_POLL_MS: '50' };

/** The musician who owns the projects and players; no part of this address may show on a page. */
export const OWNER = 'producer.private.name@example.com';

export type Player = Schemas['Player'];
export type PlayerView = Schemas['PlayerView'];
type Loudness = { integratedLufs: number; truePeakDbtp: number };

/** One version (file) of a track, as the API reports it once analysed. */
export interface FixtureVersion {
  id: string;
  /** The file's name. */
  name: string;
  versionName?: string;
  /** Seconds, as the API reports it. */
  duration: number;
  /** As the API reports it (GET file: audio.loudness). */
  loudness: Loudness;
}

/** A track: a stack (every uploaded file lands in one) and its versions, newest first as the view lists them. */
export interface FixtureTrack {
  id: string;
  name: string;
  versions: FixtureVersion[];
}

/** A FLAC file of stereo 48 kHz 1 kHz sine segments of [peak dBFS, seconds]. */
function sineFlac(name: string, segments: Array<[number, number]>): Promise<Buffer> {
  return makeAudio(name, [...stereoSegments(segments), '-c:a', 'flac', '-sample_fmt', 's16']);
}

/**
 * Uploads the files as the versions of one new stack (oldest first), names
 * the stack and the versions, waits for their analysis, and reads back what
 * the API measured.
 */
async function uploadTrack(
  h: Harness,
  projectid: string,
  trackName: string,
  files: Array<{ name: string; versionName?: string; bytes: Buffer }>,
): Promise<FixtureTrack> {
  const { api } = await h.as(OWNER);
  let stackid: string | undefined;
  const ids: string[] = [];
  for (const file of files) {
    const uploaded = await api.uploadFile(projectid, { name: file.name, mimeType: 'audio/flac', ...(stackid ? { parentid: stackid } : {}) }, file.bytes);
    if (!uploaded.data) throw new Error(`Upload of ${file.name} failed: ${JSON.stringify(uploaded.error)}`);
    stackid ??= uploaded.data.upload.stackid;
    ids.push(uploaded.data.box.id);
    if (file.versionName) {
      const named = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: uploaded.data.box.id } }, body: { versionName: file.versionName } });
      if (named.error) throw new Error(`Naming the version ${file.name} failed: ${JSON.stringify(named.error)}`);
    }
  }
  const renamed = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: stackid! } }, body: { name: trackName } });
  if (renamed.error) throw new Error(`Naming the track ${trackName} failed: ${JSON.stringify(renamed.error)}`);
  const versions: FixtureVersion[] = [];
  for (const [index, id] of ids.entries()) {
    const file = await waitForStatus(api, projectid, id, ['ready', 'failed']);
    if (file.status !== 'ready' || !file.audio || file.duration === undefined) {
      throw new Error(`${files[index].name} was not analysed: ${file.status} ${file.statusReason ?? ''}`);
    }
    versions.push({
      id,
      name: file.name,
      ...(file.versionName ? { versionName: file.versionName } : {}),
      duration: file.duration,
      loudness: { integratedLufs: file.audio.loudness.integratedLufs, truePeakDbtp: file.audio.loudness.truePeakDbtp },
    });
  }
  return { id: stackid!, name: trackName, versions: versions.reverse() };
}

/**
 * The loudness-match gain, per shared/reference.md ("Gain a player applies"),
 * computed here on its own so that the page's is checked against the rule
 * and not against a copy of its code:
 *   - "gain = target − I";
 *   - "If the gain is positive, cap it so that truePeak + gain ≤ −1 dBTP";
 *   - "For a down-only platform, clamp the gain to ≤ 0" (YouTube and Tidal
 *     "only turn loud tracks down"; Deezer and Amazon Music: "treat as down-only").
 * The target: the player's own targetLufs, else its platform's (the
 * reference's table), else −14 LUFS (openapi ViewOptions).
 */
export const PLATFORM_TARGET_LUFS = { spotify: -14, 'apple-music': -16, youtube: -14, tidal: -14, deezer: -15, 'amazon-music': -14 } as const;
const DOWN_ONLY = new Set(['youtube', 'tidal', 'deezer', 'amazon-music']);
export type LoudnessOptions = { targetLufs?: number; loudnessPlatform?: keyof typeof PLATFORM_TARGET_LUFS };

export function expectedGainDb(options: LoudnessOptions, loudness: Loudness): number {
  const target = options.targetLufs ?? (options.loudnessPlatform ? PLATFORM_TARGET_LUFS[options.loudnessPlatform] : -14);
  const gain = target - loudness.integratedLufs;
  if (gain <= 0) return gain;
  if (options.loudnessPlatform && DOWN_ONLY.has(options.loudnessPlatform)) return 0;
  return Math.min(gain, -1 - loudness.truePeakDbtp);
}

export interface ListeningProject {
  projectid: string;
  projectName: string;
  /** A stack of two versions of equal duration (20 s) and different loudness (about −20 and −12 LUFS). */
  nightDrive: FixtureTrack;
  /** About −30 LUFS with a true peak near −30 dBTP: its boost to −14 is not capped. */
  quiet: FixtureTrack;
  /** About −8 LUFS: turned down. */
  loud: FixtureTrack;
  /** About −22 LUFS integrated, but one 50 ms burst peaks near −3 dBTP: its +8 dB boost is capped near +2 dB. */
  peaky: FixtureTrack;
}

/**
 * The project of the ready-state tests, with artwork: the tracks in this
 * order on the page (Night Drive first). Checks that the audio came out as
 * the tests need it, so that no loudness check can pass for want of a case.
 */
export async function makeListeningProject(h: Harness): Promise<ListeningProject> {
  const { api } = await h.as(OWNER);
  const projectName = 'Night Drive EP';
  const { data: project, error } = await api.POST('/projects', { body: { name: projectName, color: '#1d4ed8' } });
  if (!project) throw new Error(`Project not made: ${JSON.stringify(error)}`);
  const projectid = project.id;
  const artwork = await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng);
  if (artwork.error) throw new Error(`Artwork not uploaded: ${JSON.stringify(artwork.error)}`);

  const [v1, v2, quietBytes, loudBytes, peakyBytes] = await Promise.all([
    sineFlac('night-drive-v1.flac', [[-20, 20]]),
    sineFlac('night-drive-v2.flac', [[-12, 20]]),
    sineFlac('quiet-room.flac', [[-30, 12]]),
    sineFlac('loud-floor.flac', [[-8, 12]]),
    // 50 ms at −3 dBFS in 12 s of −24 dBFS: the burst adds about 2 LU to the integrated loudness and sets the true peak.
    sineFlac('peaky-bells.flac', [[-24, 6], [-3, 0.05], [-24, 5.95]]),
  ]);
  const nightDrive = await uploadTrack(h, projectid, 'Night Drive', [
    { name: 'night-drive-v1.flac', versionName: 'v1 rough mix', bytes: v1 },
    { name: 'night-drive-v2.flac', versionName: 'v2 master', bytes: v2 },
  ]);
  const quiet = await uploadTrack(h, projectid, 'Quiet Room', [{ name: 'quiet-room.flac', bytes: quietBytes }]);
  const loud = await uploadTrack(h, projectid, 'Loud Floor', [{ name: 'loud-floor.flac', bytes: loudBytes }]);
  const peaky = await uploadTrack(h, projectid, 'Peaky Bells', [{ name: 'peaky-bells.flac', bytes: peakyBytes }]);

  // The cases the loudness checks rely on, as measured (target −14 LUFS).
  const gainOf = (track: FixtureTrack) => -14 - track.versions[0].loudness.integratedLufs;
  const capOf = (track: FixtureTrack) => -1 - track.versions[0].loudness.truePeakDbtp;
  const facts = JSON.stringify({ quiet: quiet.versions[0].loudness, loud: loud.versions[0].loudness, peaky: peaky.versions[0].loudness });
  if (!(gainOf(quiet) > 10 && capOf(quiet) > gainOf(quiet) + 3)) throw new Error(`The quiet track's boost should be large and uncapped: ${facts}`);
  if (!(gainOf(loud) < -3)) throw new Error(`The loud track should be turned down: ${facts}`);
  if (!(capOf(peaky) > 0.5 && gainOf(peaky) > capOf(peaky) + 3)) throw new Error(`The peaky track's boost should be capped by its true peak: ${facts}`);
  const [newer, older] = nightDrive.versions;
  if (Math.abs(newer.duration - older.duration) > 0.01 || Math.abs(newer.loudness.integratedLufs - older.loudness.integratedLufs) < 4) {
    throw new Error(`The two versions should last as long and differ in loudness: ${JSON.stringify(nightDrive.versions)}`);
  }
  return { projectid, projectName, nightDrive, quiet, loud, peaky };
}

/** A project of one short track (8 s), for the locked states and the embed page. */
export async function makeSmallProject(h: Harness, name = 'Demo Tapes'): Promise<{ projectid: string; track: FixtureTrack }> {
  const { api } = await h.as(OWNER);
  const { data: project, error } = await api.POST('/projects', { body: { name } });
  if (!project) throw new Error(`Project not made: ${JSON.stringify(error)}`);
  const track = await uploadTrack(h, project.id, 'Demo One', [{ name: 'demo-one.flac', bytes: await sineFlac('demo-one.flac', [[-18, 8]]) }]);
  return { projectid: project.id, track };
}

/**
 * Tracks at the edges of what the page draws: one second long, and at each
 * sample rate the analysis accepts from 8 kHz to 192 kHz (a waveform's peaks
 * have 100 points a second whatever the rate, so their samples per pixel
 * range from 80 to 1920).
 */
export async function makeEdgeCaseProject(h: Harness): Promise<{ projectid: string; tracks: FixtureTrack[] }> {
  const { api } = await h.as(OWNER);
  const { data: project, error } = await api.POST('/projects', { body: { name: 'Edge cases' } });
  if (!project) throw new Error(`Project not made: ${JSON.stringify(error)}`);
  const tone = (rate: number, seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`, '-ac', '2', '-c:a', 'flac'];
  const tracks: FixtureTrack[] = [];
  tracks.push(await uploadTrack(h, project.id, 'One second', [{ name: 'one-second.flac', bytes: await makeAudio('one-second.flac', tone(44_100, 1)) }]));
  for (const rate of [8_000, 96_000, 192_000]) {
    const name = `tone-${rate / 1000}k.flac`;
    tracks.push(await uploadTrack(h, project.id, `At ${rate / 1000} kHz`, [{ name, bytes: await makeAudio(name, tone(rate, 3)) }]));
  }
  return { projectid: project.id, tracks };
}

export async function createPlayer(h: Harness, body: Schemas['CreatePlayerRequest']): Promise<Player> {
  const { api } = await h.as(OWNER);
  const { data, error } = await api.POST('/players', { body });
  if (!data) throw new Error(`Player not made: ${JSON.stringify(error)}`);
  return data;
}

export async function updatePlayer(h: Harness, playerid: string, body: Schemas['UpdatePlayerRequest']): Promise<Player> {
  const { api } = await h.as(OWNER);
  const { data, error } = await api.POST('/players/{playerid}', { params: { path: { playerid } }, body });
  if (!data) throw new Error(`Player not updated: ${JSON.stringify(error)}`);
  return data;
}

/** A paywall needs the owner's payment provider (409 otherwise). */
export async function connectPaymentProvider(h: Harness): Promise<void> {
  const { api } = await h.as(OWNER);
  const { error } = await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_PlayerPage01' } });
  if (error) throw new Error(`Payment provider not connected: ${JSON.stringify(error)}`);
}

/** The view as an anonymous listener (or one holding `cookie`) reads it; fails unless it answers 200. */
export async function listenerView(h: Harness, playerid: string, cookie?: string): Promise<PlayerView> {
  const response = await h.fetch(`/players/${playerid}/view`, { headers: cookie ? { Cookie: cookie } : {} });
  if (response.status !== 200) throw new Error(`The view of ${playerid} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as PlayerView;
}

/** Every signed URL of a view that carries a player grant: the streams, peaks and downloads of every version. */
export function grantUrls(view: PlayerView): string[] {
  return view.tracks.flatMap((track) =>
    track.versions.flatMap((version) => [
      ...Object.values(version.streams ?? {}),
      ...(version.peaks ? [version.peaks.json, version.peaks.dat] : []),
      ...(version.download ? [version.download.url] : []),
    ]),
  );
}

/** A purchase of the player's paywall, on record, as the checkout of the paywall issue will make it. */
export async function recordPurchase(h: Harness, playerid: string, purchaseId: string): Promise<void> {
  await h.server.ctx.store.purchases.insert({ id: purchaseId, playerId: playerid, timeCreated: h.server.clock.now() });
}

/** The purchase gone from the record (a refund): nothing it opened stays open. No operation does this yet. */
export async function removePurchase(h: Harness, purchaseId: string): Promise<void> {
  await h.server.ctx.store.db.execute('DELETE FROM player_purchases WHERE id = $1', [purchaseId]);
}

/**
 * The player session cookie of a listener who paid (what the checkout will
 * set), ready for a browser context's addCookies and, as `header`, for a
 * Cookie header. Scoped like the server's own: the player's API paths.
 */
export function purchaserCookie(h: Harness, playerid: string, purchaseId: string) {
  const value = listenerSessions(h.server.ctx).issue(playerid, { id: `pss_${purchaseId}`, expires: h.server.clock.now() + LISTENER_SESSION_TTL_MS, purchaseId });
  const api = new URL(h.server.apiUrl);
  return {
    header: `${LISTENER_SESSION_COOKIE}=${value}`,
    browser: {
      name: LISTENER_SESSION_COOKIE,
      value,
      domain: api.hostname,
      path: `${api.pathname}/players/${playerid}`,
      httpOnly: true,
      sameSite: 'Lax' as const,
    },
  };
}

/** The invite link the owner would send this collaborator (`/p/{id}?invite=…`). */
export async function inviteUrlOf(h: Harness, playerid: string, email: string): Promise<string> {
  const { api } = await h.as(OWNER);
  const { data, error } = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid } } });
  const invite = data?.find((candidate) => candidate.email === email.toLowerCase());
  if (!invite) throw new Error(`No invite for ${email}: ${JSON.stringify(error ?? data)}`);
  return invite.inviteUrl;
}
