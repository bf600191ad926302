/**
 * Concurrent edits over HTTP, on both stores: ETags on every read and write
 * of a project, player, box and the preferences; If-Match answered 412 when
 * stale; and partial updates that race both landing. The store conformance
 * suite tests the same rules below HTTP, round after round.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

describe.each(backends)('concurrent edits over HTTP on %s', (backend) => {
  const t = useTestServer(backend);

  /** A POST with a JSON body, the caller's token and, when given, an If-Match header. */
  function post(path: string, token: string, body: unknown, ifMatch?: string) {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (ifMatch !== undefined) headers['If-Match'] = ifMatch;
    return t.fetch(path, { method: 'POST', headers, body: JSON.stringify(body), token });
  }

  /**
   * One of each resource that takes If-Match, made by a fresh owner: its
   * path, a change to make, and another change, of a different field.
   */
  async function resources(email: string) {
    const { api, token } = await t.as(email);
    const project = (await api.POST('/projects', { body: { name: 'Versioned' } })).data!;
    const player = (await api.POST('/players', { body: { name: 'Versioned', projectid: project.id } })).data!;
    const folder = (await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: project.id } }, body: { name: 'F' } })).data!;
    const list: Array<{ name: string; path: string; change: object; other: object }> = [
      { name: 'project', path: `/projects/${project.id}`, change: { name: 'Renamed' }, other: { color: '#abcdef' } },
      { name: 'player', path: `/players/${player.id}`, change: { options: { downloads: false } }, other: { name: 'Other' } },
      { name: 'box', path: `/projects/${project.id}/files/${folder.id}`, change: { hidden: true }, other: { name: 'Other' } },
      { name: 'preferences', path: '/me/preferences', change: { options: { comments: false } }, other: { public: false } },
    ];
    return { api, token, project, list };
  }

  it('answers the get, create and update of each resource with a strong ETag, which the next GET repeats', async () => {
    const { api, token, project, list } = await resources('etags@example.com');
    const projectid = project.id;
    const created = await api.POST('/projects', { body: { name: 'Tagged' } });
    expect(created.response.headers.get('etag')).toBe('"1"');
    expect((await api.POST('/players', { body: { name: 'Tagged', projectid } })).response.headers.get('etag')).toBe('"1"');
    expect((await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'G' } })).response.headers.get('etag')).toBe('"1"');
    const { upload } = (await api.uploadFile(projectid, { name: 'a.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('a'))).data!;
    const stack = await api.POST('/projects/{projectid}/stacks', { params: { path: { projectid } }, body: { name: 'S', childids: [upload.boxid] } });
    const stackPath = `/projects/${projectid}/files/${stack.data!.id}`;
    // A new stack's ETag counts the files moved into it; a GET right after repeats it.
    expect((await t.fetch(stackPath, { token })).headers.get('etag')).toBe(stack.response.headers.get('etag'));

    for (const { name, path, change } of [...list, { name: 'stack', path: stackPath, change: { name: 'T' } }]) {
      const tag = (await t.fetch(path, { token })).headers.get('etag')!;
      expect(tag, name).toMatch(/^"\d+"$/);
      const updated = await post(path, token, change);
      expect(updated.status, name).toBe(200);
      const newTag = updated.headers.get('etag')!;
      expect(newTag, name).toMatch(/^"\d+"$/);
      expect(newTag, name).not.toBe(tag);
      expect((await t.fetch(path, { token })).headers.get('etag'), name).toBe(newTag);
    }
  });

  it("changes a project's ETag when its files change what GET shows (size, timeModified), so an If-Match read before is stale", async () => {
    const { api, token, project } = await resources('project-etag@example.com');
    const path = `/projects/${project.id}`;
    const before = await t.fetch(path, { token });
    const tag = before.headers.get('etag')!;
    const { size } = await before.json();
    await api.uploadFile(project.id, { name: 'b.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('bytes'));
    const after = await t.fetch(path, { token });
    expect((await after.json()).size).toBe(size + 5);
    const newTag = after.headers.get('etag')!;
    expect(newTag).toMatch(/^"\d+"$/);
    expect(newTag).not.toBe(tag);
    expect((await post(path, token, { name: 'Stale' }, tag)).status).toBe(412);
    const renamed = await post(path, token, { name: 'Fresh' }, newTag);
    expect(renamed.status).toBe(200);
    expect((await t.fetch(path, { token })).headers.get('etag')).toBe(renamed.headers.get('etag'));
  });

  it('refuses an update whose If-Match is stale with a 412 problem that says to GET it again, and changes nothing', async () => {
    const { token, list } = await resources('stale@example.com');
    for (const { name, path, change, other } of list) {
      const tag = (await t.fetch(path, { token })).headers.get('etag')!;
      // Someone else changes the resource; this client still holds the ETag it read before.
      const changed = await post(path, token, change);
      expect(changed.status, name).toBe(200);
      const refused = await post(path, token, other, tag);
      expect(refused.status, name).toBe(412);
      expect(refused.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      const problem = await refused.json();
      expect(problem, name).toMatchObject({ type: '/problems/precondition-failed', title: 'Precondition failed', status: 412 });
      expect(problem.detail, name).toContain(`GET ${path} again`);
      expect(problem.detail, name).toContain('Nothing was changed');
      const after = await t.fetch(path, { token });
      expect(after.headers.get('etag'), name).toBe(changed.headers.get('etag'));
      expect(await after.json(), name).toEqual(await changed.json());
    }
  });

  it('applies an update whose If-Match is current, or *, and answers with the new ETag; a client without If-Match works as before', async () => {
    const { token, list } = await resources('current@example.com');
    for (const { name, path, change } of list) {
      const tag = (await t.fetch(path, { token })).headers.get('etag')!;
      const applied = await post(path, token, change, tag);
      expect(applied.status, name).toBe(200);
      const next = applied.headers.get('etag')!;
      expect(next, name).not.toBe(tag);
      const starred = await post(path, token, change, '*');
      expect(starred.status, name).toBe(200);
      const listed = await post(path, token, change, `W/${starred.headers.get('etag')}, "0", ${starred.headers.get('etag')}`);
      expect(listed.status, name).toBe(200);
      expect((await post(path, token, change)).status, name).toBe(200);
      // A weak tag never matches, even of the current version (RFC 9110 §13.1.1: If-Match uses the strong comparison).
      const current = (await t.fetch(path, { token })).headers.get('etag')!;
      expect((await post(path, token, change, `W/${current}`)).status, name).toBe(412);
    }
  });

  it('answers 404 and 403 before looking at If-Match, and refuses a malformed If-Match with 400 naming the header', async () => {
    const { api, token, project } = await resources('order@example.com');
    const missing = await post('/projects/prj_doesnotexist0', token, { name: 'x' }, '"1"');
    expect(missing.status).toBe(404);
    await api.POST('/players', { body: { name: 'Share', projectid: project.id, collaborators: [{ email: 'order-viewer@example.com', role: 'viewer' }] } });
    const viewer = await t.as('order-viewer@example.com');
    expect((await post(`/projects/${project.id}`, viewer.token, { name: 'x' }, '"999"')).status).toBe(403);
    for (const malformed of ['1', '"1', 'W/1', '"1" "2"']) {
      const refused = await post(`/projects/${project.id}`, token, { name: 'x' }, malformed);
      expect(refused.status, malformed).toBe(400);
      const problem = await refused.json();
      expect(problem.type).toBe('/problems/validation-error');
      expect(problem.errors, malformed).toEqual([expect.objectContaining({ header: 'if-match' })]);
    }
    expect((await api.GET('/projects/{projectid}', { params: { path: { projectid: project.id } } })).data!.name).toBe('Versioned');
  });

  it('lets a browser on another origin send If-Match and read the ETag', async () => {
    const preflight = await t.fetch('/projects/prj_x', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'if-match, content-type, authorization' },
    });
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/)).toContain('if-match');
    const { token } = await t.as('cors@example.com');
    const read = await t.fetch('/me/preferences', { token, headers: { Origin: 'https://app.example' } });
    expect(read.headers.get('access-control-expose-headers')?.toLowerCase().split(/,\s*/)).toContain('etag');
  });

  it('keeps both of two partial updates that race, without If-Match; with the same If-Match, one lands and the other gets 412 until it reads again', async () => {
    const { token, list } = await resources('racers@example.com');
    const [project, player] = list;
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([
        post(project.path, token, { name: `name ${round}` }),
        post(project.path, token, { color: `#0000${round.toString(16).padStart(2, '0')}` }),
        post(player.path, token, { name: `player ${round}` }),
        post(player.path, token, { options: { downloads: round % 2 === 0 } }),
      ]).then(async (responses) => {
        expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200]);
        return [await (await t.fetch(project.path, { token })).json(), await (await t.fetch(player.path, { token })).json()];
      });
      expect([a.name, a.color]).toEqual([`name ${round}`, `#0000${round.toString(16).padStart(2, '0')}`]);
      expect([b.name, b.options.downloads]).toEqual([`player ${round}`, round % 2 === 0]);
    }
    // The flow the spec describes: two editors read the same version, both send it back.
    const tag = (await t.fetch(project.path, { token })).headers.get('etag')!;
    const outcomes = await Promise.all([post(project.path, token, { name: 'first' }, tag), post(project.path, token, { color: '#ffffff' }, tag)]);
    expect(outcomes.map((response) => response.status).sort()).toEqual([200, 412]);
    const loser = outcomes[0].status === 412 ? { name: 'first' } : { color: '#ffffff' };
    const reread = await t.fetch(project.path, { token });
    expect((await post(project.path, token, loser, reread.headers.get('etag')!)).status).toBe(200);
    expect(await (await t.fetch(project.path, { token })).json()).toMatchObject({ name: 'first', color: '#ffffff' });
  });
});
