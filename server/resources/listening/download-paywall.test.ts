/**
 * A download-only paywall (`fulfillment: "allow-download"`) sells the
 * files: until it is paid, a listener plays only the compressed stream. A
 * lossless stream decodes to the very samples of the uploaded master, so it
 * is a download by another name: the view does not offer it, and lossless
 * or original URLs minted before the paywall are refused. Proved by
 * decoding what the view offers with ffmpeg, on both stores.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { makeAudio } from '../../testing/audio.ts';
import { waitForStatus } from '../../testing/files.ts';
import { listenerSessions } from './listener.ts';
import { LISTENER_SESSION_TTL_MS } from './listener-session.ts';

const run = promisify(execFile);
const OWNER = 'master.seller@example.com';

/** The audio of `bytes` decoded by ffmpeg to 16-bit stereo PCM at 48 kHz. */
async function decode(bytes: Buffer): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'decode-'));
  try {
    const file = join(dir, 'in');
    writeFileSync(file, bytes);
    const { stdout } = await run('ffmpeg', ['-v', 'error', '-nostdin', '-i', file, '-f', 's16le', '-ac', '2', '-ar', '48000', 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(backends)('a download-only paywall on %s', (backend) => {
  const t = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  let projectid: string;
  let wavId: string;
  let master: Buffer;
  let masterPcm: Buffer;

  const view = async (playerid: string, cookie?: string) => {
    const response = await t.fetch(`/players/${playerid}/view`, { headers: cookie ? { Cookie: cookie } : {} });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as Schemas['PlayerView'];
  };
  const fetched = async (url: string) => {
    const response = await fetch(url);
    expect(response.status, url).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_MasterSeller01' } });
    projectid = (await api.POST('/projects', { body: { name: 'Masters' } })).data!.id;
    // Noise, so that no lossy codec could give back the same samples by chance.
    master = await makeAudio('master.wav', ['-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.5:sample_rate=48000:duration=2:seed=19', '-ac', '2', '-c:a', 'pcm_s16le']);
    masterPcm = await decode(master);
    wavId = (await api.uploadFile(projectid, { name: 'master.wav', mimeType: 'audio/wav' }, master)).data!.box.id;
    const box = await waitForStatus(api, projectid, wavId);
    expect(box.audio?.renditions).toContain('lossless');
  });

  it('offers an unpaid listener only the compressed stream, refuses lossless and original URLs, and gives the master to the buyer', async () => {
    const { api } = await t.as(OWNER);
    const player = (await api.POST('/players', { body: { name: 'Masters for sale', projectid, boxids: [wavId], public: true } })).data!;
    // Before the paywall: a lossless stream, which is the master's very samples.
    const free = (await view(player.id)).tracks[0].versions[0];
    expect((await decode(await fetched(free.streams!.lossless!))).equals(masterPcm)).toBe(true);

    const { error } = await api.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: { payment: { price: 999, fulfillment: 'allow-download', recipient: 'customer' } } });
    expect(error).toBeUndefined();
    const unpaid = await view(player.id);
    expect(unpaid.access).toMatchObject({ state: 'locked', lock: 'paywall', stream: true, download: false });
    expect(unpaid.qualities).toEqual(['compressed']);
    const version = unpaid.tracks[0].versions[0];
    expect(Object.keys(version.streams ?? {})).toEqual(['compressed']);
    expect(version).not.toHaveProperty('download');
    // What plays is lossy: its samples are not the master's.
    const compressed = await decode(await fetched(version.streams!.compressed!));
    expect(compressed.length).toBeGreaterThan(masterPcm.length / 2);
    expect(compressed.equals(masterPcm)).toBe(false);
    // Every stream URL the view holds decodes to something other than the master.
    for (const url of Object.values(version.streams!)) expect((await decode(await fetched(url))).equals(masterPcm), url).toBe(false);
    // URLs minted before the paywall stop working: lossless and original are what it sells.
    for (const url of [free.streams!.lossless!, free.streams!.original!, free.download!.url]) {
      const refused = await fetch(url);
      expect(refused.status, url).toBe(403);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await refused.json()).toMatchObject({ type: '/problems/signature-invalid', detail: expect.stringContaining('Read the player\'s view again') });
    }
    expect((await fetch(free.streams!.compressed!)).status).toBe(200);

    // Paid: the buyer gets the lossless stream and the download, both the master's samples.
    await t.server.ctx.store.purchases.insert({ id: 'pur_master01', playerId: player.id, timeCreated: t.server.clock.now() });
    const cookie = `as_player_session=${listenerSessions(t.server.ctx).issue(player.id, { id: 'pss_master', expires: t.server.clock.now() + LISTENER_SESSION_TTL_MS, purchaseId: 'pur_master01' })}`;
    const paid = await view(player.id, cookie);
    expect(paid.access).toMatchObject({ state: 'open', download: true, viewer: { kind: 'purchaser' } });
    expect(paid.qualities).toEqual(['original', 'lossless', 'compressed']);
    const bought = paid.tracks[0].versions[0];
    expect((await decode(await fetched(bought.streams!.lossless!))).equals(masterPcm)).toBe(true);
    expect((await fetched(bought.download!.url)).equals(master)).toBe(true);
  });

  it('offers members every quality, paywall or not', async () => {
    const { api, token } = await t.as(OWNER);
    const player = (
      await api.POST('/players', { body: { name: 'Members', projectid, boxids: [wavId], public: true, payment: { price: 999, fulfillment: 'allow-download', recipient: 'everyone' } } })
    ).data!;
    const response = await t.fetch(`/players/${player.id}/view`, { token });
    const body = (await response.json()) as Schemas['PlayerView'];
    expect(body.qualities).toEqual(['original', 'lossless', 'compressed']);
    expect((await decode(await fetched(body.tracks[0].versions[0].streams!.lossless!))).equals(masterPcm)).toBe(true);
  });
});
