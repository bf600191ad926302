/**
 * Listener insights: recordPlay as a listener (no token), getPlayerInsights
 * with the suite's bearer token, each called validly and invalidly. The
 * mock keeps no state and answers the spec's examples, so there the calls
 * use the examples' ids and only the shape of each answer is checked.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../generated/client.ts';
import { makeAudio } from '../server/testing/audio.ts';
import { client, onMock, raw } from './support/context.ts';

const api = client();
const json = { 'Content-Type': 'application/json' };
const tooLongId = 'x'.repeat(65);

/** The examples' ids, which the mock answers for; replaced by real ones on a server. */
const ids = { projectid: 'prj_7h2kq9xw4m', fileid: 'box_f1le4n8q7r', playerid: 'ply_4c8n2r7t1v' };

/** A report as the player page sends it: no bearer token. */
const report = (body: object, playerid = ids.playerid) =>
  raw(`/players/${playerid}/plays`, { method: 'POST', token: null, headers: json, body: JSON.stringify(body) });

beforeAll(async () => {
  if (onMock) return;
  const { data: project } = await api.POST('/projects', { body: { name: 'Contract: insights' } });
  ids.projectid = project!.id;
  const tone = await makeAudio('insights.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=6', '-ac', '2', '-c:a', 'pcm_s16le']);
  const { data, error } = await api.uploadFile(ids.projectid, { name: 'insights.wav', mimeType: 'audio/wav' }, tone);
  expect(error).toBeUndefined();
  ids.fileid = data!.box.id;
  const { data: player } = await api.POST('/players', { body: { name: 'Contract: insights', projectid: ids.projectid, public: true } });
  ids.playerid = player!.id;
});

describe('listener insights (extension)', () => {
  it('recordPlay keeps a report of a play, and refuses a malformed one', async () => {
    const playid = `contract-${Date.now()}-play`;
    const kept = await report({ playid, fileid: ids.fileid, heard: 4, position: 4.5 });
    expect(kept.status).toBe(200);
    const play = (await kept.json()) as Schemas['Play'];
    expect(play.object).toBe('play');
    if (!onMock) expect(play).toEqual({ object: 'play', playid, fileid: ids.fileid, heard: 4, position: 4.5, counted: true });
    expect((await report({ playid, fileid: ids.fileid, heard: -1, position: 0 })).status).toBe(400);
    expect((await report({ fileid: ids.fileid, heard: 4, position: 4 })).status).toBe(400);
    expect((await report({ playid, fileid: ids.fileid, heard: 4, position: 4 }, tooLongId)).status).toBe(400);
  });

  it.skipIf(onMock)('recordPlay answers 404 for a file the player does not show (stored state: skipped on the mock)', async () => {
    const missing = await report({ playid: `contract-${Date.now()}-none`, fileid: 'box_notinplayer00', heard: 4, position: 4 });
    expect(missing.status).toBe(404);
  });

  it('getPlayerInsights answers the plays, downloads and purchases of a player, and refuses a request without a token', async () => {
    const { data, response } = await api.GET('/players/{playerid}/insights', { params: { path: { playerid: ids.playerid } } });
    expect(response.status).toBe(200);
    expect(data!.object).toBe('player-insights');
    if (!onMock) {
      expect(data!.totals).toMatchObject({ plays: 1, listeners: 1 });
      expect(data!.tracks[0]).toMatchObject({ fileid: ids.fileid, plays: 1, listeners: [{ name: 'Anonymous', anonymous: true, plays: 1, farthest: 4.5 }] });
    }
    expect((await raw(`/players/${ids.playerid}/insights`, { token: null })).status).toBe(401);
    expect((await api.GET('/players/{playerid}/insights', { params: { path: { playerid: tooLongId } } })).response.status).toBe(400);
  });
});
