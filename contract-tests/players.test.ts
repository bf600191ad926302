import { describe, expect, it } from 'vitest';
import { client, onMock, raw } from './support/context.ts';

const api = client();

describe('players', () => {
  it('createPlayer creates a player and returns it with a playerUrl', async () => {
    const { data, response } = await api.POST('/players', { body: { name: 'Contract: whole new project' } });
    expect(response.status).toBe(200);
    expect(data?.object).toBe('player');
    expect(data?.playerUrl).toMatch(/^https?:\/\//);
  });

  it('createPlayer refuses a body without the required name', async () => {
    const response = await raw('/players', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ public: true }),
    });
    expect(response.status).toBe(400);
  });

  it('createPlayer refuses an option outside its enum', async () => {
    const response = await raw('/players', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x', options: { quality: 'ultra' } }),
    });
    expect(response.status).toBe(400);
  });

  it.skipIf(onMock)('createPlayer fills in the final option defaults (needs stored state: skipped on the mock)', async () => {
    const { data } = await api.POST('/players', { body: { name: 'Contract: defaults' } });
    expect(data?.options).toMatchObject({ downloads: true, comments: true, serviceCTA: true, stacks: false, boxSubtitle: 'artist' });
    expect(data?.options).not.toHaveProperty('quality');
    expect(data?.public).toBe(true);
  });

  it.skipIf(onMock)('createPlayer refuses boxids together with folderid (a rule over stored ids: skipped on the mock)', async () => {
    const { data: project } = await api.POST('/projects', { body: { name: 'Contract: scope rules' } });
    const { response } = await api.POST('/players', {
      body: { name: 'x', projectid: project!.id, folderid: 'box_a', boxids: ['box_b'] },
    });
    expect(response.status).toBe(400);
  });

  it('listPlayers answers an array of players', async () => {
    const { data, response } = await api.GET('/players');
    expect(response.status).toBe(200);
    expect(Array.isArray(data)).toBe(true);
  });

  it('listPlayers refuses a limit out of range', async () => {
    const response = await raw('/players?limit=0');
    expect(response.status).toBe(400);
  });

  it.skipIf(onMock)('listPlayers answers pages of `limit` with a Link to the next one, and the pages make the whole list (needs stored state: skipped on the mock)', async () => {
    await api.POST('/players', { body: { name: 'Contract: page one' } });
    await api.POST('/players', { body: { name: 'Contract: page two' } });
    const { data: whole } = await api.GET('/players');
    const seen: string[] = [];
    let answer = await api.GET('/players', { params: { query: { limit: 1 } } });
    for (let pages = 0; ; pages++) {
      expect(answer.data).toHaveLength(1);
      seen.push(answer.data![0].id);
      const next = /<([^>]+)>;\s*rel="next"/.exec(answer.response.headers.get('link') ?? '')?.[1];
      if (!next) break;
      expect(pages).toBeLessThan(whole!.length);
      answer = await api.GET('/players', { params: { query: { limit: 1, cursor: new URL(next).searchParams.get('cursor')! } } });
    }
    expect(seen).toEqual(whole!.map((player) => player.id));
  });

  it.skipIf(onMock)('listPlayers refuses a cursor it did not give (the mock checks shapes, not signatures: skipped on the mock)', async () => {
    const response = await raw('/players?limit=1&cursor=WzAsInBseV8wIl0.not-a-signature');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errors: [{ parameter: 'cursor' }] });
  });

  it('listPlayers refuses a request without a bearer token', async () => {
    const response = await raw('/players', { token: null });
    expect(response.status).toBe(401);
  });

  it('getPlayer and updatePlayer work on a created player', async () => {
    const { data: created } = await api.POST('/players', { body: { name: 'Contract: to update' } });
    const got = await api.GET('/players/{playerid}', { params: { path: { playerid: created!.id } } });
    expect(got.response.status).toBe(200);
    const updated = await api.POST('/players/{playerid}', {
      params: { path: { playerid: created!.id } },
      body: { name: 'Contract: updated', options: { downloads: false } },
    });
    expect(updated.response.status).toBe(200);
  });

  it.skipIf(onMock)('updatePlayer changes only the fields given (needs stored state: skipped on the mock)', async () => {
    const { data: created } = await api.POST('/players', { body: { name: 'Contract: partial update', options: { comments: false } } });
    const { data: updated } = await api.POST('/players/{playerid}', {
      params: { path: { playerid: created!.id } },
      body: { options: { downloads: false } },
    });
    expect(updated).toMatchObject({ name: 'Contract: partial update', options: { downloads: false, comments: false } });
    const { data: read } = await api.GET('/players/{playerid}', { params: { path: { playerid: created!.id } } });
    expect(read).toEqual(updated);
  });

  it('updatePlayer applies the ETag of getPlayer sent back in If-Match, and refuses a malformed If-Match', async () => {
    const { data: created } = await api.POST('/players', { body: { name: 'Contract: versioned player' } });
    const playerid = created!.id;
    const got = await api.GET('/players/{playerid}', { params: { path: { playerid } } });
    const etag = got.response.headers.get('etag')!;
    const updated = await api.POST('/players/{playerid}', { params: { path: { playerid }, header: { 'If-Match': etag } }, body: { options: { comments: false } } });
    expect(updated.response.status).toBe(200);
    const refused = await raw(`/players/${playerid}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'If-Match': `${etag} ${etag}` },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(refused.status).toBe(400);
  });

  it.skipIf(onMock)('updatePlayer refuses a stale If-Match with 412 and changes nothing (needs stored state: skipped on the mock)', async () => {
    const created = await api.POST('/players', { body: { name: 'Contract: stale player' } });
    const playerid = created.data!.id;
    const stale = created.response.headers.get('etag')!;
    await api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { options: { downloads: false } } });
    const refused = await api.POST('/players/{playerid}', { params: { path: { playerid }, header: { 'If-Match': stale } }, body: { name: 'Contract: lost' } });
    expect(refused.response.status).toBe(412);
    expect(refused.error).toMatchObject({ type: '/problems/precondition-failed', status: 412 });
    const { data } = await api.GET('/players/{playerid}', { params: { path: { playerid } } });
    expect(data).toMatchObject({ name: 'Contract: stale player', options: { downloads: false } });
  });

  it('getPlayer refuses a request without a bearer token', async () => {
    const response = await raw('/players/ply_4c8n2r7t1v', { token: null });
    expect(response.status).toBe(401);
  });

  it('updatePlayer refuses boxSubtitle, which cannot be changed after creation', async () => {
    const response = await raw('/players/ply_4c8n2r7t1v', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ options: { boxSubtitle: 'none' } }),
    });
    expect(response.status).toBe(400);
  });

  it('updatePlayer takes payment: null, which removes a paywall', async () => {
    const { data: created } = await api.POST('/players', { body: { name: 'Contract: no paywall' } });
    const { data, response } = await api.POST('/players/{playerid}', { params: { path: { playerid: created!.id } }, body: { payment: null } });
    expect(response.status).toBe(200);
    if (!onMock) expect(data).not.toHaveProperty('payment');
  });

  it('createPlayer and updatePlayer refuse an expires past the largest timestamp (2^53 − 1) with 400', async () => {
    for (const [path, body] of [
      ['/players', { name: 'x', expires: 1e308 }],
      ['/players/ply_4c8n2r7t1v', { expires: 2 ** 53 }],
    ] as const) {
      const response = await raw(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it.skipIf(onMock)('getPlayer answers 404 for an id that does not exist (needs stored state: skipped on the mock)', async () => {
    const { response } = await api.GET('/players/{playerid}', { params: { path: { playerid: 'ply_doesnotexist' } } });
    expect(response.status).toBe(404);
  });
});
